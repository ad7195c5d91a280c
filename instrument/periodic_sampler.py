"""Periodic samplers: a strobe every ``period`` observed cycles, to snapshot counters into a trace.

The HMM records the chosen counters' values (with their overflow flags) into a
:class:`~hwgen.instrument.trace_buffer.TraceBuffer` on every strobe, so values can be drawn over time.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["PeriodicSampler"]


class PeriodicSampler(wiring.Component):
    """Pulse ``sample`` in every ``period``-th cycle in which ``enable`` is high.

    Parameters
    ----------
    period : int
        Cycles between samples, at least 1.

    Members
    -------
    enable : In(1)
        Count this cycle towards the period.
    clear : In(1)
        Restart the period.
    sample : Out(1)
        High in the cycle that completes a period (cycles ``period - 1``, ``2 * period - 1``, ...
        of the enabled cycles since the last clear).
    """

    def __init__(self, period):
        if isinstance(period, bool) or not isinstance(period, int) or period < 1:
            raise ValueError(f"period must be a positive integer, not {period!r}")
        self._period = period
        super().__init__({
            "enable": In(1),
            "clear": In(1),
            "sample": Out(1),
        })

    @property
    def period(self):
        return self._period

    def elaborate(self, platform):
        m = Module()
        if self._period == 1:
            m.d.comb += self.sample.eq(self.enable)
            return m
        # Counts down so the strobe is one comparison with zero.
        left = Signal(range(self._period), init=self._period - 1)
        m.d.comb += self.sample.eq(self.enable & (left == 0))
        with m.If(self.clear):
            m.d.sync += left.eq(left.init)
        with m.Elif(self.enable):
            m.d.sync += left.eq(Mux(left == 0, self._period - 1, left - 1))
        return m
