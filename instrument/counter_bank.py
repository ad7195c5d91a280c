"""Counter banks: many counts that all change in the same cycle, kept in one RAM table.

A state profile's counts take turns (one state per cycle); the counts of a stream's categories,
of busy cycles or of bytes moved all change in the same cycle, so each needs an adder of its
own. A bank keeps only a small *low part* per count in registers, wide enough for what the
count gathers in a few cycles, and the counts themselves in a RAM table: one entry per cycle,
in turn, takes its low part (which restarts from that cycle's amount) through one pipelined,
saturating read-modify-write. An entry is visited every ``period`` cycles (the number of
counts, at least the pipeline's length), so no update is still in flight when its entry is read
again: the table needs no forwarding, and one adder as wide as the counts serves them all.

The table holds a count once the low part has been added, ``period`` + :data:`BANK_LATENCY`
cycles after it at most: once counting stops the bank goes on visiting its entries until every
low part is empty (``settling``), and a host reads the counts when the HMM is frozen and no
longer busy, as it reads a state profile's.
"""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import count_layout

__all__ = ["BANK_LATENCY", "CounterBank"]

#: Cycles from an entry's visit to its update being written: the read, the low half's sum, the
#: high half's with the saturation, the write. An entry is visited again no sooner.
BANK_LATENCY = 4


class CounterBank(wiring.Component):
    """Saturating counts of amounts taken in every cycle, in one RAM table.

    Parameters
    ----------
    amount_bits : sequence of int
        The width of each count's amount (1 for an event), one per count.
    bits : int
        Width of each count; a count saturates and sets its overflow flag, as a register
        count does (:func:`~hwgen.instrument.saturating.count_layout`).

    Members
    -------
    amount<i> : In(amount_bits[i])
        What count ``i`` adds in this cycle.
    enable : In(1)
        Count this cycle.
    clear : In(1)
        Zero every count; the table is swept while ``busy`` is high (keep ``enable`` low).
    busy : Out(1)
        A clear is in progress.
    settling : Out(1)
        The low parts are still being added to the table (they all are once it falls and
        ``enable`` stayed low).
    raddr : In(range(len(amount_bits)))
        The entry the host reads, while the bank is neither counting nor settling.
    rdata : Out(count_layout(bits))
        Its count, one cycle later.
    """

    def __init__(self, amount_bits, bits=32):
        amount_bits = tuple(amount_bits)
        if not amount_bits or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1
                                      for w in amount_bits):
            raise ValueError(f"amount_bits must be a non-empty sequence of positive integers, "
                             f"not {amount_bits!r}")
        self._amount_bits = amount_bits
        self._layout = count_layout(bits)
        self._bits = bits
        super().__init__({
            **{f"amount{i}": In(w) for i, w in enumerate(amount_bits)},
            "enable": In(1),
            "clear": In(1),
            "busy": Out(1),
            "settling": Out(1),
            "raddr": In(range(len(amount_bits))),
            "rdata": Out(self._layout),
        })

    bits = property(lambda self: self._bits)
    amount_bits = property(lambda self: self._amount_bits)

    @property
    def period(self):
        """Cycles between two visits of an entry."""
        return max(len(self._amount_bits), BANK_LATENCY)

    @property
    def low_bits(self):
        """The width of each count's low part: what it gathers between two visits."""
        return tuple((self.period * ((1 << w) - 1)).bit_length() for w in self._amount_bits)

    @property
    def table_bits(self):
        """RAM bits of the table."""
        return len(self._amount_bits) * self._layout.size

    def amount(self, i):
        return getattr(self, f"amount{i}")

    def elaborate(self, platform):
        m = Module()
        n, bits, period = len(self._amount_bits), self._bits, self.period
        layout = self._layout
        m.submodules.table = table = Memory(shape=layout.size, depth=n, init=[],
                                            attrs={"ram_style": "distributed"})
        rd, wr = table.read_port(domain="comb"), table.write_port()

        # Visiting: the entry whose low part is taken in this cycle; the bank visits while it
        # counts and for a period after, so that every low part is emptied.
        slot = Signal(range(period))
        drain = Signal(range(period + 1))
        visiting = Signal()
        m.d.comb += visiting.eq(self.enable | drain.any())
        lows = [Signal(w, name=f"low{i}") for i, w in enumerate(self.low_bits)]
        with m.If(self.clear):
            m.d.sync += [low.eq(0) for low in lows]
            m.d.sync += [slot.eq(0), drain.eq(0)]
        with m.Else():
            for i, low in enumerate(lows):
                # A visited low part restarts from this cycle's amount.
                kept = Mux(visiting & (slot == i), 0, low)
                m.d.sync += low.eq(kept + Mux(self.enable, self.amount(i), 0))
            with m.If(visiting):
                m.d.sync += slot.eq(Mux(slot == period - 1, 0, slot + 1))
            m.d.sync += drain.eq(Mux(self.enable, period, Mux(drain.any(), drain - 1, 0)))

        # The pipeline: the entry's address (a register, as the host's), the word read, the
        # low half added, the high half with its carry and the saturation, the write.
        half = min(bits, max(max(self.low_bits), (bits + 1) // 2))
        addr0, valid0 = Signal(range(n)), Signal()
        amount0 = Signal(max(self.low_bits))
        addr1, valid1, word1, amount1 = (Signal(range(n)), Signal(), Signal(layout),
                                         Signal(len(amount0)))
        addr2, valid2 = Signal(range(n)), Signal()
        low2, carry2 = Signal(half), Signal()
        high2, overflow2 = Signal(bits - half), Signal()
        addr3, valid3, word3 = Signal(range(n)), Signal(), Signal(layout)
        in_table = slot < n
        m.d.sync += [
            addr0.eq(Mux(visiting, slot, self.raddr)),
            valid0.eq(visiting & in_table & ~self.clear),
            amount0.eq(Array(lows)[slot] if n > 1 else lows[0]),
            addr1.eq(addr0), valid1.eq(valid0 & ~self.clear), word1.eq(rd.data),
            amount1.eq(amount0),
        ]
        m.d.comb += [rd.addr.eq(addr0), self.rdata.eq(rd.data)]
        low_sum = word1.count[:half] + amount1
        m.d.sync += [
            addr2.eq(addr1), valid2.eq(valid1 & ~self.clear),
            low2.eq(low_sum[:half]), carry2.eq(low_sum[half:].any()),
            overflow2.eq(word1.overflow),
        ]
        if half < bits:
            m.d.sync += high2.eq(word1.count[half:])
            high_sum = high2 + carry2
            saturate = overflow2 | high_sum[bits - half]
            total = Cat(low2, high_sum[:bits - half], 0)
        else:
            saturate = overflow2 | carry2
            total = Cat(low2, 0)
        m.d.sync += [addr3.eq(addr2), valid3.eq(valid2 & ~self.clear),
                     word3.eq(Mux(saturate, (1 << (bits + 1)) - 1, total))]

        # A clear sweeps the table with zeros, one entry per cycle; the updates in flight are
        # dropped (their valid bits fall with the clear).
        sweep, sweeping = Signal(range(n)), Signal()
        m.d.comb += [
            wr.en.eq(sweeping | valid3),
            wr.addr.eq(Mux(sweeping, sweep, addr3)),
            wr.data.eq(Mux(sweeping, 0, word3)),
            self.busy.eq(sweeping),
            self.settling.eq(visiting | valid0 | valid1 | valid2 | valid3),
        ]
        with m.If(self.clear):
            m.d.sync += [sweep.eq(0), sweeping.eq(1)]
        with m.Elif(sweeping):
            m.d.sync += sweep.eq(sweep + 1)
            with m.If(sweep == n - 1):
                m.d.sync += sweeping.eq(0)
        return m
