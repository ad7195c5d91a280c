"""Carry banks: counts whose low parts add in registers and whose high parts share a RAM table.

A count of the HMM spends most of its logic on the carry chain of its high part, which changes
once every few hundred cycles at most, and on the readout's multiplexer in front of all its
bits. A carry bank keeps each count's *low part* in a register with its adder, wide enough that
it carries at most once a period, and a *pending* flag set by that carry (a cycle after it,
from a flip-flop); the high parts are the entries of one LUT-RAM table, visited in turn, one
per cycle: a visited entry whose flag is set takes the carry through one adder, in two halves
a cycle each, written three edges later. So the counts share one high-part adder, and the host
reads the high parts through the table's read port, which is the multiplexer.
Each low part is as wide as its amounts need (a count of events takes 3 bits in a bank of up
to 5 counts); the entries hold the counts from the narrowest low part up, so one carry out of
the adder says that any of them saturates.

A count saturates when a carry reaches an all-ones high part (the incrementer's carry out):
the entry stays all ones and the count's overflow flag is set, and a saturated count reads as
all ones whatever its low part holds. The counts are exact once the bank is no longer
``settling`` (every pending carry taken) while ``enable`` stays low; the HMM reads them only
then, once frozen (a ``snapshot="traces"`` HMM: nothing copies them while they count).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .saturating import amount_widths, count_layout
from .select import select

__all__ = ["CarryBank"]

#: Bits of one LUT-RAM cell's word (an ECP5 TRELLIS_DPR16X4 is 16 x 4).
_RAM_CELL_BITS = 4

#: The fewest cycles between two visits of an entry: its sum is written three edges after.
_MIN_PERIOD = 4


class CarryBank(wiring.Component):
    """Saturating counts of amounts taken in every cycle, their high parts in one RAM table
    (see the module).

    Parameters
    ----------
    amount_bits : sequence of int
        The width of each count's amount (1 for an event), one per count.
    bits : int
        Width of each count (wider than :attr:`low_bits`); a count saturates and sets its
        overflow flag, as a register count does
        (:func:`~hwgen.instrument.saturating.count_layout`).

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
        Carries are still on their way into the table (all are in once it falls and
        ``enable`` stayed low).
    raddr : In(range(len(amount_bits)))
        The count the host reads, while the bank is neither counting nor settling.
    rdata : Out(count_layout(bits))
        Its value, one cycle later.
    """

    def __init__(self, amount_bits, bits=32):
        amount_bits = amount_widths(amount_bits)
        self._amount_bits = amount_bits
        count_layout(bits)      # checks bits
        if bits <= max(self.low_bits_for(amount_bits)):
            raise ValueError(f"bits must exceed the widest low part "
                             f"({max(self.low_bits_for(amount_bits))} bits for these amounts), "
                             f"not {bits!r}")
        self._bits = bits
        super().__init__({
            **{f"amount{i}": In(w) for i, w in enumerate(amount_bits)},
            "enable": In(1),
            "clear": In(1),
            "busy": Out(1),
            "settling": Out(1),
            "raddr": In(range(len(amount_bits))),
            "rdata": Out(count_layout(bits)),
        })

    bits = property(lambda self: self._bits)
    amount_bits = property(lambda self: self._amount_bits)

    @property
    def period(self):
        """Cycles between two visits of an entry (at least four: an entry's sum is written
        three edges after its visit, before it is read again)."""
        return max(len(self._amount_bits), _MIN_PERIOD)

    @staticmethod
    def low_bits_for(amount_bits):
        """The widths of the low parts of a bank of counts of ``amount_bits``: a low part that
        carried holds less than its largest amount, and carries again only after gathering
        more than a period and two cycles of them (its carry is registered a cycle before it
        is pending), by which time its pending carry was taken."""
        period = max(len(amount_bits), _MIN_PERIOD)
        return tuple(((period + 2) * ((1 << w) - 1)).bit_length() for w in amount_bits)

    @property
    def low_bits(self):
        """The width of each count's low part: :meth:`low_bits_for`, the narrowest widened so
        that the table's word is a whole number of LUT-RAM cells (one cell fewer for a few
        flip-flops more)."""
        needed = self.low_bits_for(self._amount_bits)
        base = min(needed)
        spare = (self._bits - base) % _RAM_CELL_BITS
        if self._bits - base - spare >= _RAM_CELL_BITS:
            base += spare
        return tuple(max(w, base) for w in needed)

    @property
    def table_bits(self):
        """RAM bits of the table."""
        return len(self._amount_bits) * (self._bits - min(self.low_bits))

    def amount(self, i):
        return getattr(self, f"amount{i}")

    def elaborate(self, platform):
        m = Module()
        n, period, low_bits = len(self._amount_bits), self.period, self.low_bits
        # An entry holds its count from the narrowest low part's width up, so the entries'
        # tops align and one carry out says that any of them saturates: a count with a wider
        # low part keeps zeros in the entry's bits below its own, and adds its carry above them.
        base, widest = min(low_bits), max(low_bits)
        high_bits = self._bits - base
        m.submodules.table = table = Memory(shape=high_bits, depth=n, init=[],
                                            attrs={"ram_style": "distributed"})
        rd, wr = table.read_port(domain="comb"), table.write_port()

        lows = [Signal(w, name=f"low{i}") for i, w in enumerate(low_bits)]
        carries = Signal(n)
        pending = Signal(n)
        saturated = Signal(n)

        # `addr`, a register, is the entry read in this cycle: visited in turn while counting
        # or settling, swept after a clear, else the host's.
        addr = Signal(range(period))
        sweeping = Signal()
        visiting = Signal()
        m.d.comb += [rd.addr.eq(addr), visiting.eq(self.enable | carries.any() | pending.any())]
        with m.If(self.clear):
            m.d.sync += [addr.eq(0), sweeping.eq(1)]
        with m.Elif(sweeping):
            m.d.sync += addr.eq(Mux(addr == n - 1, 0, addr + 1))
            with m.If(addr == n - 1):
                m.d.sync += sweeping.eq(0)
        with m.Elif(visiting):
            m.d.sync += addr.eq(Mux(addr == period - 1, 0, addr + 1))
        with m.Else():
            m.d.sync += addr.eq(self.raddr)

        # The entry read, the amount it takes (the carry at the entry's bit, one bit per width of
        # low part beyond the narrowest, or nothing) and where it goes: a register each, so the
        # adder's operands come from flip-flops (a multiplexer choosing the amount in front of
        # its carry chain was the critical path of the U8 PE's `minimal` HMM, 5.44 ns).
        word, inc, take = Signal(high_bits), Signal(widest - base + 1), Signal()
        written, swept = Signal.like(addr), Signal()
        taken = (pending >> addr)[0] & ~sweeping
        shift = select([1 << (w - base) for w in low_bits], addr)
        m.d.sync += [word.eq(Mux(sweeping, 0, rd.data)), inc.eq(Mux(taken, shift, 0)),
                     take.eq(taken & ~self.clear), written.eq(addr),
                     swept.eq(sweeping & ~self.clear)]
        # The entry's sum takes two cycles, its lower half (as wide as the amount at least) in
        # the first, its upper half and the carry between them in the second: a chain the
        # length of the table's word (28 bits, 4.99 ns on the U1 PE's `minimal` HMM) was the
        # HMM's longest path.
        split = max(len(inc), (high_bits + 1) // 2)
        lower = word[:split] + inc
        summed, carried, upper = Signal(split), Signal(), Signal(high_bits - split)
        take_upper, written_upper, swept_upper = Signal(), Signal.like(addr), Signal()
        m.d.sync += [summed.eq(lower[:split]), carried.eq(lower[split]), upper.eq(word[split:]),
                     take_upper.eq(take & ~self.clear), written_upper.eq(written),
                     swept_upper.eq(swept & ~self.clear)]
        # The sum, and whether to write it, are registered once more: the adder's carry out
        # into the table's write enable was a critical path. A sum that carries out of the
        # table's word is not written: the count saturates, its entry already all ones.
        total = upper + carried
        wen, waddr, wdata = Signal(), Signal.like(addr), Signal(high_bits)
        overflows, written_late, swept_late = Signal(), Signal(), Signal()
        m.d.sync += [wen.eq((swept_upper | (take_upper & ~total[len(upper)])) & ~self.clear),
                     waddr.eq(written_upper), wdata.eq(Cat(summed, total[:len(upper)])),
                     overflows.eq(take_upper & total[len(upper)] & ~self.clear),
                     written_late.eq(take_upper & ~self.clear),
                     swept_late.eq(swept_upper & ~self.clear)]
        m.d.comb += [wr.addr.eq(waddr), wr.data.eq(wdata), wr.en.eq(wen)]

        # A low part's carry out is a flip-flop, and makes the count's carry pending a cycle
        # later: the carry chain into the pending flag's logic was the U8 PE's `minimal` HMM's
        # longest path (5.26 ns).
        for i, low in enumerate(lows):
            sum_ = low + self.amount(i)
            with m.If(self.clear):
                m.d.sync += [low.eq(0), carries[i].eq(0), pending[i].eq(0), saturated[i].eq(0)]
            with m.Else():
                with m.If(self.enable):
                    m.d.sync += [low.eq(sum_[:len(low)]), carries[i].eq(sum_[len(low)])]
                with m.Else():
                    m.d.sync += carries[i].eq(0)
                # The last cycle's carry stays pending when the entry's visit takes the one before.
                m.d.sync += pending[i].eq(carries[i] | (pending[i] & ~(taken & (addr == i))))
                with m.If(overflows & (waddr == i)):
                    m.d.sync += saturated[i].eq(1)

        # The host's count: its low part, or all ones once saturated, under the entry (whose
        # bits below the low part's top are zeros).
        full = select(saturated, addr)
        low = select([Cat(low, Const(0, widest - len(low))) for low in lows], addr)
        low = low | full.replicate(widest)
        m.d.comb += [
            self.rdata.count.eq(Cat(low[:base], low[base:] | rd.data[:widest - base],
                                    rd.data[widest - base:])),
            self.rdata.overflow.eq(full),
            # The sweep's last write lands three edges after it.
            self.busy.eq(sweeping | swept | swept_upper | swept_late),
            self.settling.eq(carries.any() | pending.any() | take | take_upper | written_late),
        ]
        return m
