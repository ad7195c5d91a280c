"""Change recorders: a record whenever a watched value changes, for a trace.

A :class:`ChangeRecorder` watches one value (for example every hardware thread's 2-bit state, or
the states of several state machines side by side) and asks for a record whenever it differs from
the last one recorded; the HMM writes those records, with their timestamps, into a
:class:`~hwgen.instrument.trace_buffer.TraceBuffer` the host drains while the design runs, or that
counts exactly the records it had to drop. Between two records nothing changed, so the records
alone give the value in every cycle.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ChangeRecorder"]


class ChangeRecorder(wiring.Component):
    """Request a record whenever ``value`` changes.

    The first enabled cycle after reset or ``clear`` always records, so the trace starts from a
    known value. Changes during cycles with ``enable`` low are not recorded; the next enabled
    cycle records if the value differs from the last record.

    Parameters
    ----------
    width : int
        Bits of the watched value, at least 1.

    Members
    -------
    value : In(width)
    enable, clear : In(1)
    record : Out(1)
        Write a record of ``value`` in this cycle.
    """

    def __init__(self, width):
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        self._width = width
        super().__init__({
            "value": In(width),
            "enable": In(1),
            "clear": In(1),
            "record": Out(1),
        })

    @property
    def width(self):
        return self._width

    def elaborate(self, platform):
        m = Module()
        last = Signal(self._width)         # the value of the last record
        primed = Signal()                  # a record has been made since reset or clear
        m.d.comb += self.record.eq(self.enable & ~self.clear &
                                   (~primed | (self.value != last)))
        with m.If(self.clear):
            m.d.sync += primed.eq(0)
        with m.Elif(self.record):
            m.d.sync += [last.eq(self.value), primed.eq(1)]
        return m
