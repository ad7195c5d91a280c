"""Event counters: cycles in which events happen, or amounts accumulated when they are valid."""

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .saturating import Counters, build_count, count_lag, count_layout

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
    gated : bool
        Count only while ``enable`` is high; ``False`` for the events of another part, which
        carry the enable already (a cycle late: the last comes after ``enable`` fell).
    live : bool
        A sum read only once counting stopped: its low part is shown as it adds (see
        :func:`~hwgen.instrument.saturating.build_count`).

    Members
    -------
    valid : In(sources)
        One bit per source.
    amount : In(ArrayLayout(unsigned(amount_bits), sources))
        Only with ``amount_bits``.
    value : Out(count_layout(bits))
    """

    def __init__(self, bits=32, *, sources=1, amount_bits=None, gated=True, live=False):
        if isinstance(sources, bool) or not isinstance(sources, int) or sources < 1:
            raise ValueError(f"sources must be a positive integer, not {sources!r}")
        if amount_bits is not None and (isinstance(amount_bits, bool)
                                        or not isinstance(amount_bits, int) or amount_bits < 1):
            raise ValueError(f"amount_bits must be a positive integer or None, not {amount_bits!r}")
        self._sources = sources
        self._amount_bits = amount_bits
        self._gated = bool(gated)
        self._live = bool(live)
        self._now = None
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

    @property
    def lag(self):
        """Cycles ``value`` lags the count (:func:`~hwgen.instrument.saturating.count_lag`)."""
        return count_lag(self.bits, len(self._increment()))

    @property
    def now(self):
        """``value`` as it would be without its lag (see
        :func:`~hwgen.instrument.saturating.build_count`): ``value`` itself if it does not lag."""
        if not self.lag:
            return self.value
        if self._now is None:
            self._now = Signal(count_layout(self.bits), name="now")
        return self._now

    def _increment(self):
        """What a cycle adds."""
        if self._amount_bits is None:
            return sum(self.valid) if self._sources > 1 else self.valid
        terms = [Mux(self.valid[i], self.amount[i], 0) for i in range(self._sources)]
        return sum(terms[1:], terms[0])

    def elaborate(self, platform):
        m = Module()
        now, _ = build_count(m, self.value, self._increment(), clear=self.clear,
                             when=self.enable if self._gated else None, live=self._live)
        if self._now is not None:
            m.d.comb += self._now.eq(now)
        return m
