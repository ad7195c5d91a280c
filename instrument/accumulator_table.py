"""Accumulator tables: one sum per source, in a RAM table, for sources that take turns.

When at most one of several sources is valid in any cycle (the PEs of a system behind one
off-chip port, which moves one read beat and one write beat per cycle), their sums need one
read-modify-write per cycle, not an adder and a register each: the valid source's index and
amount update its entry of a count table
(:func:`~hwgen.instrument.state_profiler.build_count_table`), as a state profiler counts the one
active state. The index and amount are the OR of the valid sources' own, which is exact only
while at most one is valid; more in one cycle break the contract and the sums both.
"""

from amaranth.hdl import Module, Mux, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .saturating import count_layout
from .state_profiler import build_count_table, count_table_bits

__all__ = ["AccumulatorTable"]


def _either(values):
    """The OR of ``values``, as a balanced tree (a chain nests as deep as the values are many)."""
    values = list(values)
    while len(values) > 1:
        values = [a | b for a, b in zip(values[::2], values[1::2])] + values[len(values) & ~1:]
    return values[0]


class AccumulatorTable(wiring.Component):
    """Per-source sums of amounts, in a RAM table, for sources of which at most one is valid in
    any cycle.

    Parameters
    ----------
    sources : int
        Number of sources (entries of the table), at least 1.
    amount_bits : int
        Width of each source's amount.
    bits : int
        Width of each sum; a sum saturates and sets its overflow flag.

    Members
    -------
    valid : In(sources)
        One bit per source; at most one may be high in a cycle.
    amount : In(ArrayLayout(unsigned(amount_bits), sources))
        What each source adds when valid.
    enable : In(1)
        Count this cycle. While low, the table's read port serves ``raddr``.
    clear : In(1)
        Zero every sum; the table is swept while ``busy`` is high (keep ``enable`` low).
    busy : Out(1)
    raddr : In(range(sources))
        The entry the host reads, while ``enable`` is low.
    rdata : Out(count_layout(bits))
        Its sum, one cycle later.
    """

    def __init__(self, sources, amount_bits, bits=32):
        for name, value in (("sources", sources), ("amount_bits", amount_bits)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self._sources = sources
        self._amount_bits = amount_bits
        self._layout = count_layout(bits)
        self._bits = bits
        super().__init__({
            "valid": In(sources),
            "amount": In(data.ArrayLayout(unsigned(amount_bits), sources)),
            "enable": In(1),
            "clear": In(1),
            "busy": Out(1),
            "raddr": In(range(sources)),
            "rdata": Out(self._layout),
        })

    sources = property(lambda self: self._sources)
    amount_bits = property(lambda self: self._amount_bits)
    bits = property(lambda self: self._bits)

    @property
    def table_bits(self):
        """RAM bits of the table."""
        return count_table_bits(self._sources, self._bits, ones=False)

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        index = _either(Mux(self.valid[i], i, 0) for i in range(n)) if n > 1 else 0
        amount = _either(Mux(self.valid[i], self.amount[i], 0) for i in range(n))
        build_count_table(m, index=index, count=self.enable & self.valid.any(), clear=self.clear,
                          raddr=self.raddr, rdata=self.rdata, busy=self.busy, depth=n,
                          bits=self._bits, amount=amount)
        return m
