"""Small designs with closed-form resource counts, shared by the tests."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


class Registers(wiring.Component):
    """A 12-bit counter and an 8-bit register; optionally a 16-bit register that drives nothing."""

    def __init__(self, dead=False):
        self.dead = dead
        super().__init__({"en": In(1), "d": In(8), "q": Out(8), "count": Out(12)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(12)
        with m.If(self.en):
            m.d.sync += [count.eq(count + 1), self.q.eq(self.d)]
        m.d.comb += self.count.eq(count)
        if self.dead:
            unused = Signal(16)
            m.d.sync += unused.eq(unused + self.d)
        return m
