"""Event counters: cycles in which events happen, or amounts accumulated when they are valid."""

from amaranth.hdl import Module, Mux, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .saturating import Counters, add_saturating, count_layout

__all__ = ["EventCounter"]


class EventCounter(Counters):
    """A saturating counter fed by one or more sources.

    Without ``amount_bits`` every source is an event, and each cycle adds the number of sources
    whose ``valid`` bit is high (one source: the cycles in which the event happened). With
    ``amount_bits`` each source also carries an amount, and each cycle adds the amounts of the
    sources whose ``valid`` bit is high.

    Parameters
    ----------
    bits : int
        Width of the count (a :class:`~hwgen.instrument.saturating.Counters` part, which has
        ``enable`` and ``clear`` too).
    sources : int
        Number of sources, at least 1.
    amount_bits : int or None
        Width of each source's amount; ``None`` for events.

    Members
    -------
    valid : In(sources)
        One bit per source.
    amount : In(ArrayLayout(unsigned(amount_bits), sources))
        Only with ``amount_bits``.
    value : Out(count_layout(bits))
    """

    def __init__(self, bits=32, *, sources=1, amount_bits=None):
        if isinstance(sources, bool) or not isinstance(sources, int) or sources < 1:
            raise ValueError(f"sources must be a positive integer, not {sources!r}")
        if amount_bits is not None and (isinstance(amount_bits, bool)
                                        or not isinstance(amount_bits, int) or amount_bits < 1):
            raise ValueError(f"amount_bits must be a positive integer or None, not {amount_bits!r}")
        self._sources = sources
        self._amount_bits = amount_bits
        members = {"valid": In(sources), "value": Out(count_layout(bits))}
        if amount_bits is not None:
            members["amount"] = In(data.ArrayLayout(unsigned(amount_bits), sources))
        super().__init__(bits, members)

    @property
    def sources(self):
        return self._sources

    @property
    def amount_bits(self):
        return self._amount_bits

    def elaborate(self, platform):
        m = Module()
        if self._amount_bits is None:
            increment = sum(self.valid) if self._sources > 1 else self.valid
        else:
            terms = [Mux(self.valid[i], self.amount[i], 0) for i in range(self._sources)]
            increment = sum(terms[1:], terms[0])
        with m.If(self.clear):
            m.d.sync += self.value.as_value().eq(0)
        with m.Else():
            add_saturating(m, self.value, increment, when=self.enable)
        return m
