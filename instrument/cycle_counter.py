"""The cycle counter: how many cycles the HMM has observed, and the timestamp of its traces."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .saturating import add_saturating, count_layout

__all__ = ["CycleCounter"]


class CycleCounter(wiring.Component):
    """Count the cycles in which ``enable`` is high.

    Parameters
    ----------
    bits : int
        Width of the count; it saturates and sets its overflow flag.

    Members
    -------
    enable : In(1)
        Count this cycle.
    clear : In(1)
        Zero the count (and its flag) at the next edge; this cycle is not counted.
    value : Out(count_layout(bits))
    """

    def __init__(self, bits=32):
        self._layout = count_layout(bits)
        self._bits = bits
        super().__init__({
            "enable": In(1),
            "clear": In(1),
            "value": Out(self._layout),
        })

    @property
    def bits(self):
        return self._bits

    def elaborate(self, platform):
        m = Module()
        with m.If(self.clear):
            m.d.sync += self.value.as_value().eq(0)
        with m.Else():
            add_saturating(m, self.value, self.enable)
        return m
