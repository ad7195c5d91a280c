"""The cycle counter: how many cycles the HMM has observed, and the timestamp of its traces."""

from amaranth.hdl import Module
from amaranth.lib.wiring import Out

from .saturating import Counters, build_count, count_layout

__all__ = ["CycleCounter"]


class CycleCounter(Counters):
    """Count the cycles in which ``enable`` is high: the HMM's ``cycles``, which timestamps its
    traces.

    A :class:`~hwgen.instrument.saturating.Counters` part (``bits`` wide, with its ``enable``
    and ``clear``) of one count.

    Members
    -------
    value : Out(count_layout(bits))
    """

    def __init__(self, bits=32):
        super().__init__(bits, {"value": Out(count_layout(bits))})

    def elaborate(self, platform):
        m = Module()
        build_count(m, self.value, self.enable, clear=self.clear)
        return m
