"""Latency histograms: the latency of every response of an in-order request/response channel.

Requests leave their timestamps in a queue; each response takes the oldest one out, so its latency
is known in the cycle it arrives and goes straight into a histogram
(:func:`~hwgen.instrument.histogram.build_histogram`). The oldest timestamp's age waits in a register
and the queue always fetches the timestamp after it into a register (block RAM through its
synchronous read port; distributed RAM reads the next two from registered addresses and
registers both), so a new age is a difference of two registers (both differences, chosen
after the subtraction, with distributed RAM). The queue holds ``depth`` timestamps; when more
requests are outstanding, the newest go untracked (counted, not queued) until their responses have
arrived, so every measured latency is exact and the unmeasured responses are counted exactly.
Tracking goes on while the HMM is frozen or cleared: only samples and counts stop.

The channel also yields the cycles spent waiting: requests outstanding and no response.

The part keeps the histogram's bins, sum, minimum and maximum; it gives its three counts (the
latencies measured, the cycles waiting, the responses not measured) as events, one each per
cycle, for the HMM to count in its counter bank or in registers
(:class:`~hwgen.instrument.probe.Latency`).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .histogram import (beyond_bins, build_histogram, check_histogram, histogram_labels,
                        histogram_members)
from .state_profiler import DISTRIBUTED_ENTRIES, count_table_bits

__all__ = ["LatencyHistogram"]


class LatencyHistogram(wiring.Component):
    """A histogram of response latencies, in cycles from each request.

    Parameters
    ----------
    depth : int
        Outstanding requests tracked at once, rounded up to a power of two.
    bins, bin_width : int
        Of the histogram, as for :class:`~hwgen.instrument.histogram.Histogram`.
    latency_bits : int
        Width of a latency; latencies are exact below ``2 ** latency_bits`` cycles.
    bits : int
        Width of the counts; they saturate and set their overflow flags.

    Members
    -------
    request : In(1)
        A request is accepted in this cycle.
    response : In(1)
        A response is accepted in this cycle (responses come in request order): one for a
        response in the cycle after its request.
    enable : In(1)
        Count this cycle.
    clear, busy, raddr, rdata, sum, sum_now, min, max
        The histogram's, as for :class:`~hwgen.instrument.histogram.Histogram`.
    measured : Out(1)
        A latency is taken into the histogram in this cycle (its ``count`` counts these).
    waiting : Out(1)
        A cycle with requests from earlier cycles outstanding and no response (``wait_cycles``).
    missed : Out(1)
        A response whose latency was not measured (``untracked``).

    Every figure takes a cycle a cycle after it (the minimum and maximum three), from registers;
    the events come a cycle after theirs, only while ``enable`` is high and not in a ``clear``
    cycle, so that counting them all gives the counts since the last clear.
    """

    def __init__(self, depth, *, bins=32, bin_width=1, latency_bits=16, bits=32):
        for name, value in (("depth", depth), ("latency_bits", latency_bits)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        check_histogram(bins, bin_width)
        self._depth = 1 << (depth - 1).bit_length()
        self._bins = bins
        self._bin_width = bin_width
        self._latency_bits = latency_bits
        self._bits = bits
        super().__init__({
            "request": In(1),
            "response": In(1),
            "enable": In(1),
            **histogram_members(latency_bits, bins, bits, count=False),
            "measured": Out(1),
            "waiting": Out(1),
            "missed": Out(1),
        })

    depth = property(lambda self: self._depth)
    bins = property(lambda self: self._bins)
    bin_width = property(lambda self: self._bin_width)
    latency_bits = property(lambda self: self._latency_bits)
    bits = property(lambda self: self._bits)

    @property
    def table_bits(self):
        """Block-RAM bits of the bins."""
        return count_table_bits(self._bins + 1, self._bits)

    @property
    def queue_bits(self):
        """Distributed-RAM bits of the timestamp queue."""
        return self._depth * self._latency_bits

    def labels(self):
        return histogram_labels(self._bins, self._bin_width)

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        m.submodules.queue = queue = Memory(shape=self._latency_bits, depth=depth, init=[])
        wr = queue.write_port()

        # The queue is addressed modulo depth; its occupancy and whether requests go untracked
        # are kept in registers, so every decision below is a few gates deep.
        tail = Signal(range(depth))
        level = Signal(range(depth + 1))      # tracked requests outstanding
        now = Signal(self._latency_bits)
        ahead = Signal(self._latency_bits, init=1)    # now + 1, so an age is one subtraction
        age = Signal(self._latency_bits)      # cycles since the oldest tracked request was made
        # Untracked requests (all newer than the queued ones), a cycle late: `skipped` plus what
        # the last cycle skipped and lost. The cycle's request and response only reach one-bit
        # registers, not the choice of a wide next value.
        skipped = Signal(self._latency_bits)
        skipped_last, lost_last = Signal(), Signal()
        skipping = Signal()                   # any request untracked
        queued = Signal()                     # level != 0
        full = Signal()                       # level == depth
        slot = slice(0, (depth - 1).bit_length())
        track = self.request & ~skipping & ~full
        pop = self.response & queued
        lost = self.response & ~queued & skipping
        skip = self.request & ~track
        # Whether any request is untracked after this cycle, from registers and without the
        # adder: the count moves by one at most.
        skipped_one = Signal()                # one request untracked
        # Whether the late count is 1, 2 or 3, decided a cycle ahead from its register and the
        # moves that update it; with the last cycle's moves they say whether two are untracked
        # now, from registers, and none of it waits for this cycle's request.
        bits = self._latency_bits
        wrap = 1 << bits

        def skipped_equals(k):
            # The bits above k's are all zero when adding all ones to them carries nothing out:
            # a short carry chain instead of a wide comparison.
            low = max(k.bit_length(), 2)
            if low >= bits:
                return skipped == k % wrap
            return ~(skipped[low:] + ((1 << (bits - low)) - 1))[bits - low] & (skipped[:low] == k)

        skipped_is = {k: Signal(name=f"skipped_is{k}") for k in range(1, min(4, wrap))}
        for k, flag in skipped_is.items():
            m.d.sync += flag.eq(Mux(skipped_last == lost_last, skipped_equals(k),
                                    Mux(skipped_last, skipped_equals(k - 1),
                                        skipped_equals(k + 1))))
        two = {k: skipped_is.get(k, 0) for k in (1, 2, 3)}
        skipped_two = Mux(skipped_last == lost_last, two[2],
                          Mux(skipped_last, two[1], two[3]))
        skipping_next = Mux(skip, 1, skipping & ~(lost & skipped_one))
        level_next = Mux(track == pop, level, Mux(track, level + 1, level - 1))
        # The queue reads the request after the next cycle's head: head + 1, or head + 2 when
        # this cycle pops. Both are kept in registers so no adder sits before the read address.
        head_plus = [Signal(range(depth), init=k % depth, name=f"head_plus{k}") for k in (1, 2)]
        m.d.comb += [
            wr.addr.eq(tail[slot]),
            wr.data.eq(now),
            wr.en.eq(track),
        ]
        if depth <= DISTRIBUTED_ENTRIES:
            # Both candidates are read from their registers, asynchronously, and registered
            # after the RAM (with the request written at the same edge, if it is one of them):
            # the subtraction below starts from registers, the choice between them made by a
            # registered `pop` in the adder's own LUTs.
            fetched = []
            for k, address in enumerate(head_plus):
                port = queue.read_port(domain="comb")
                word = Signal(self._latency_bits, name=f"next{k + 1}")
                m.d.comb += port.addr.eq(address[slot])
                m.d.sync += word.eq(Mux(track & (tail[slot] == address[slot]), now, port.data))
                fetched.append(word)
            popped = Signal()
            m.d.sync += popped.eq(pop)
            # Both ages are subtracted from registers, and the registered `pop` chooses between
            # the differences: it does not fan out into the carry chain.
            next_age = Mux(popped, ahead - fetched[1], ahead - fetched[0])
        else:
            # Block RAM registers its address: the read port is transparent to the request
            # written at the same edge.
            rd = queue.read_port(domain="sync", transparent_for=(wr,))
            m.d.comb += rd.addr.eq(Mux(pop, head_plus[1], head_plus[0])[slot])
            next_age = ahead - rd.data
        with m.If(pop):
            m.d.sync += [head_plus[0].eq(head_plus[1]),
                         head_plus[1].eq((head_plus[1] + 1)[slot])]
        m.d.sync += [
            now.eq(now + 1),
            ahead.eq(ahead + 1),
            tail.eq((tail + track)[slot]),
            level.eq(level_next),
            queued.eq(Mux(track == pop, queued, track | (level != 1))),
            full.eq(Mux(track == pop, full, track & (level == depth - 1))),
            # Both neighbours of `skipped` come from its register; the choice follows the
            # adders and is made by registers.
            skipped.eq(Mux(skipped_last == lost_last, skipped,
                           Mux(skipped_last, skipped + 1, skipped - 1))),
            skipped_last.eq(skip),
            lost_last.eq(lost),
            skipping.eq(skipping_next),
            skipped_one.eq(Mux(skip == lost, skipped_one, Mux(skip, ~skipping, skipped_two))),
        ]
        # The next head is the request just made when the queue is (or becomes) empty, else the
        # one the read port fetched. Its age is kept in a register, so the latency a response
        # samples needs no subtraction in front of the histogram.
        with m.If(level == pop):       # no tracked request left after this cycle
            m.d.sync += age.eq(1)
        with m.Elif(pop):
            m.d.sync += age.eq(next_age)
        with m.Else():
            m.d.sync += age.eq(age + 1)

        # The histogram takes each latency a cycle after its response, from registers: the
        # logic that decides whether a response pops the queue does not share a cycle with the
        # counts.
        latency = Signal.like(age, name="latency")
        # Whether the latency is beyond the bins, registered with it: the bin is chosen by one
        # multiplexer in front of the table's address.
        beyond = Signal(name="beyond")
        m.d.sync += [latency.eq(age), self.measured.eq(self.enable & pop & ~self.clear),
                     beyond.eq(beyond_bins(age, self._bins, self._bin_width))]
        build_histogram(m, self, value=latency, sample=self.measured, bins=self._bins,
                        bin_width=self._bin_width, beyond=beyond, count=False)
        # The waiting cycles and the untracked responses come a cycle later too, from
        # registers, in step with the histogram.
        m.d.sync += [
            self.waiting.eq(self.enable & (queued | skipping) & ~self.response & ~self.clear),
            self.missed.eq(self.enable & lost & ~self.clear),
        ]
        return m
