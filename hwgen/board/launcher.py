"""The host's thread launches of a multithreaded pipeline, in hardware.

In simulation the host (:class:`hwgen.sim.HostModel`) offers thread ``t`` on the pipeline's
``launch`` stream from cycle ``t * launch_delay_cycles`` of the job on; over a UART a host could
not keep that pace, so on a board :class:`Launcher` does it, cycle for cycle as the simulated host.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Launcher"]


class Launcher(wiring.Component):
    """Offer threads ``0 .. threads - 1`` on ``launch``, thread ``t`` from cycle
    ``t * launch_delay_cycles`` after ``start`` on, until ``done``.

    Parameters
    ----------
    threads : int
    launch_delay_cycles : int
        At least 0.
    tid_bits : int
        Width of a thread id on ``launch``.

    Members
    -------
    start, done : In(1)
        The job's start strobe and done strobe.
    launch : Out(stream.Signature(tid_bits))
    """

    def __init__(self, threads, launch_delay_cycles, tid_bits):
        for name, value, low in (("threads", threads, 1), ("tid_bits", tid_bits, 1),
                                 ("launch_delay_cycles", launch_delay_cycles, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, not {value!r}")
        self._threads = threads
        self._delay = launch_delay_cycles
        super().__init__({"start": In(1), "done": In(1),
                          "launch": Out(stream.Signature(tid_bits))})

    def elaborate(self, platform):
        m = Module()
        last = self._threads * self._delay
        running = Signal()
        cycle = Signal(range(last + 2))     # cycles since start, held once past every due
        due = Signal(range(last + 1))       # the cycle the next thread is offered from
        following = Signal(range(self._threads + 1))

        m.d.comb += [
            self.launch.valid.eq(running & (following < self._threads) & (cycle >= due)),
            self.launch.payload.eq(following),
        ]
        with m.If(cycle <= last):
            m.d.sync += cycle.eq(cycle + 1)
        with m.If(self.launch.valid & self.launch.ready):
            m.d.sync += [following.eq(following + 1), due.eq(due + self._delay)]
        with m.If(self.done):
            m.d.sync += running.eq(0)
        with m.If(self.start):
            m.d.sync += [running.eq(1), cycle.eq(0), due.eq(0), following.eq(0)]
        return m
