"""Per-thread state recorders: every change of any hardware thread's state, for a trace.

Each thread reports its state in 2 bits: idle 0, running 1, critical 2 (holds a lock), spinning 3
(waits for one). The recorder asks for a record of every thread's state whenever any of them
changes; the HMM writes those records, with their timestamps, into a
:class:`~instrument.trace_buffer.TraceBuffer` the host drains while the design runs, or that
counts exactly the records it had to drop.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ThreadStateRecorder", "THREAD_STATES"]

#: The state of a thread, by its 2-bit code.
THREAD_STATES = ("idle", "running", "critical", "spinning")


class ThreadStateRecorder(wiring.Component):
    """Request a record whenever the state of any thread changes.

    The first enabled cycle after reset or ``clear`` always records, so the trace starts from a
    known state. Changes during cycles with ``enable`` low are not recorded; the next enabled
    cycle records if the states differ from the last record.

    Parameters
    ----------
    threads : int
        Number of threads, at least 1.

    Members
    -------
    states : In(2 * threads)
        Thread ``t``'s state in bits ``2t`` and ``2t + 1``.
    enable, clear : In(1)
    record : Out(1)
        Write a record of ``states`` in this cycle.
    """

    def __init__(self, threads):
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        self._threads = threads
        super().__init__({
            "states": In(2 * threads),
            "enable": In(1),
            "clear": In(1),
            "record": Out(1),
        })

    @property
    def threads(self):
        return self._threads

    def elaborate(self, platform):
        m = Module()
        last = Signal(2 * self._threads)   # the states of the last record
        primed = Signal()                  # a record has been made since reset or clear
        m.d.comb += self.record.eq(self.enable & ~self.clear &
                                   (~primed | (self.states != last)))
        with m.If(self.clear):
            m.d.sync += primed.eq(0)
        with m.Elif(self.record):
            m.d.sync += [last.eq(self.states), primed.eq(1)]
        return m
