"""A parking stage: per-thread context slots, the operation's slot states, and a thread scheduler.

Every thread has its own slot, so a parking stage always accepts the threads that arrive, from
any number of predecessors in the same cycle. A slot goes through these states::

    EMPTY --arrive--> WAIT --issue--> BUSY --complete--> READY --leave--> EMPTY

``issue`` and ``complete`` come from the operation's own logic (a memory port, a lock, a
barrier); ``complete`` may also come straight from WAIT (then the operation finished in the cycle
it was issued). A :class:`~hwgen.kernels.pipeline.stage.Join` skips to READY on arrival. The thread
scheduler picks one READY slot per cycle, round robin, and hands its context to the next stage.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .arbiter import RoundRobin, select
from .stage import resolve_field

__all__ = ["SlotState", "ParkingStage"]


class SlotState(enum.Enum, shape=2):
    EMPTY = 0
    WAIT = 1
    BUSY = 2
    READY = 3


class ParkingStage(wiring.Component):
    """Context slots and a thread scheduler for one parking stage.

    Parameters
    ----------
    context : StructLayout
        The thread context; has a ``tid`` field.
    threads : int
        Slots, one per thread.
    sources : int
        Predecessor edges (threads may arrive on all of them in one cycle, each a different one).
    arrive_ready : bool
        Arriving threads are ready at once (no operation).
    result_path : tuple or None
        Context field that ``result`` is written into on ``complete``.
    result_width : int
        Width of ``result``.

    Members
    -------
    arrive_valid : In(sources)
    arrive_ctx : In(ArrayLayout(context, sources))
    issue, complete : In(threads)
        Per slot: the operation was issued / is finished this cycle.
    result : In(result_width)
    state : Out(ArrayLayout(SlotState, threads))
    slots : Out(ArrayLayout(context, threads))
    wait : Out(threads)
        Slots in WAIT.
    out_valid : Out(1)
    out_ctx : Out(context)
        The thread the scheduler releases this cycle.
    arrived : Out(1)
        A thread arrived this cycle.
    stall : Out(threads)
        Per thread: it is parked here and nothing happened to it this cycle.
    """
    def __init__(self, context, *, threads, sources, arrive_ready=False, result_path=None,
                 result_width=0):
        self._context = context
        self._threads = threads
        self._sources = sources
        self._arrive_ready = arrive_ready
        self._result_path = result_path
        super().__init__({
            "arrive_valid": In(sources),
            "arrive_ctx": In(data.ArrayLayout(context, sources)),
            "issue": In(threads),
            "complete": In(threads),
            "result": In(unsigned(result_width)),
            "state": Out(data.ArrayLayout(SlotState, threads)),
            "slots": Out(data.ArrayLayout(context, threads)),
            "wait": Out(threads),
            "out_valid": Out(1),
            "out_ctx": Out(context),
            "arrived": Out(1),
            "stall": Out(threads),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._threads
        m.submodules.scheduler = scheduler = RoundRobin(n)

        # One register per slot: a slot's update then touches its own context only, not a
        # register of every thread's context (which simulators evaluate whole).
        slots = [Signal(self._context, name=f"slot{t}") for t in range(n)]
        m.d.comb += self.slots.eq(Cat(slots))

        ready = Cat(self.state[t] == SlotState.READY for t in range(n))
        occupied = Cat(self.state[t] != SlotState.EMPTY for t in range(n))
        m.d.comb += [
            self.wait.eq(Cat(self.state[t] == SlotState.WAIT for t in range(n))),
            scheduler.requests.eq(ready),
            scheduler.accept.eq(1),
            self.out_valid.eq(scheduler.valid),
            self.out_ctx.eq(select(scheduler.grant, slots)),
            self.arrived.eq(self.arrive_valid.any()),
        ]
        leave = scheduler.grant

        arrive = Signal(n)
        for t in range(n):
            hits = [self.arrive_valid[s] & (self.arrive_ctx[s].tid == t) for s in range(self._sources)]
            m.d.comb += arrive[t].eq(Cat(hits).any())
        m.d.comb += self.stall.eq(occupied & ~(leave | self.issue | self.complete))

        for t, slot in enumerate(slots):
            with m.If(arrive[t]):
                m.d.sync += self.state[t].eq(SlotState.READY if self._arrive_ready else SlotState.WAIT)
                for s in range(self._sources):
                    with m.If(self.arrive_valid[s] & (self.arrive_ctx[s].tid == t)):
                        m.d.sync += slot.eq(self.arrive_ctx[s])
            with m.Elif(leave[t]):
                m.d.sync += self.state[t].eq(SlotState.EMPTY)
            with m.Elif(self.complete[t]):
                m.d.sync += self.state[t].eq(SlotState.READY)
                if self._result_path is not None:
                    m.d.sync += resolve_field(slot, self._result_path).eq(self.result)
            with m.Elif(self.issue[t]):
                m.d.sync += self.state[t].eq(SlotState.BUSY)
        return m
