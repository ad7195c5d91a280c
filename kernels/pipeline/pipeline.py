"""The multithreaded stage-controlled pipeline: a program's datapath, shared by its threads.

One :class:`Pipeline` is a PE (:mod:`hwgen.kernels.pe`) generated from a
:class:`~hwgen.kernels.pipeline.program.Program`. Its datapath exists once; up to ``threads`` threads
flow through it, each in its own stage or parked in a slot of a parking stage. The host latches
the run-time parameters with ``ctrl.start``, then starts each thread by sending its id on the
``launch`` stream; ``ctrl.done`` pulses when every thread has left the program.

Probe points
------------
Signals created in ``__init__``, so they are the same objects in the elaborated fragment and a
profiler can attach to them from outside (``kernels`` never imports ``instrument``):

``thread_state``
    ``ArrayLayout(ThreadState, threads)``: per thread, 2 bits (``IDLE`` 0 before its launch and
    after it has finished, ``RUNNING`` 1, ``CRITICAL`` 2 while it holds a lock, ``SPINNING`` 3
    while it waits for a lock or at a barrier). Thread ``t`` is bits ``2t`` and ``2t + 1``.
``stall``
    Per thread: it is parked in a parking stage and nothing happened to it this cycle (waiting
    for an arbiter, a memory response beyond the minimum latency, a lock, a barrier, or the
    scheduler). Static stages never stall.
``ops_performed``
    Arithmetic operations performed this cycle: the ``ops`` of every Compute stage a thread
    enters.
``stage_enable``
    Per stage (bit ``i`` is :attr:`Pipeline.stage_names` ``[i]``): a thread enters the stage.
"""

from functools import reduce
from operator import or_

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In

from ..pe import BeatFormat, pe_members
from .local import LocalRead, LocalWrite, build_local
from .offchip import Load, Store, build_offchip
from .parking import ParkingStage
from .program import Program
from .schedule import Schedule
from .stage import Compute, resolve_field
from .sync import Acquire, Release, Wait, build_sync

__all__ = ["ThreadState", "Pipeline"]


def _check_resource_names(stages):
    """Locks, barriers and local memories name hardware: one object per name and kind."""
    for kind, attribute in (("lock", "lock"), ("barrier", "barrier"), ("local memory", "memory")):
        by_name = {}
        for stage in stages:
            resource = getattr(stage, attribute, None)
            if resource is not None and by_name.setdefault(resource.name, resource) is not resource:
                raise ValueError(f"two different {kind}s are named {resource.name!r}; give each "
                                 f"its own name or use the same object")


class ThreadState(enum.Enum, shape=2):
    IDLE = 0
    RUNNING = 1
    CRITICAL = 2
    SPINNING = 3


class Pipeline(wiring.Component):
    """A multithreaded stage-controlled pipeline generated from a program.

    Parameters
    ----------
    program : Program

    Members
    -------
    ctrl : In(ControlSignature(program.params))
    rd_req, rd_rsp, wr_req : streams, see :mod:`hwgen.kernels.pe`
        Read beats carry as many lanes as the widest Load, write beats as the widest Store
        (stride 1).
    launch : In(stream.Signature(unsigned(tid width)))
        Thread ids the host starts, accepted while ``ctrl.busy``; a thread that already runs
        or has finished in this job is not started again.
    """

    def __init__(self, program):
        if not isinstance(program, Program):
            raise TypeError(f"program must be a Program, not {program!r}")
        self._program = program
        self._schedule = Schedule(program.body)
        stages = [node.stage for node in self._schedule.nodes]
        _check_resource_names(stages)
        rd_lanes = max((s.lanes for s in stages if isinstance(s, Load)), default=1)
        wr_lanes = max((s.lanes for s in stages if isinstance(s, Store)), default=1)
        self._rd_beat = BeatFormat(rd_lanes, 1, program.element_bits)
        self._wr_beat = BeatFormat(wr_lanes, 1, program.element_bits)

        threads = program.threads
        members = pe_members(addr_width=program.addr_width, rd_beat=self._rd_beat,
                             wr_beat=self._wr_beat, params=program.params)
        members["launch"] = In(stream.Signature(program.context["tid"].shape))
        super().__init__(members)

        self.thread_state = Signal(data.ArrayLayout(ThreadState, threads))
        self.stall = Signal(threads)
        self.ops_performed = Signal(range(self.max_ops_per_cycle + 1))
        self.stage_enable = Signal(len(stages))

    program = property(lambda self: self._program)
    threads = property(lambda self: self._program.threads)
    addr_width = property(lambda self: self._program.addr_width)
    rd_beat = property(lambda self: self._rd_beat)
    wr_beat = property(lambda self: self._wr_beat)
    schedule = property(lambda self: self._schedule)

    @property
    def stage_names(self):
        """Names of the stages, in the order of the ``stage_enable`` bits."""
        return tuple(node.name for node in self._schedule.nodes)

    @property
    def max_ops_per_cycle(self):
        return sum(node.stage.ops for node in self._schedule.nodes if isinstance(node.stage, Compute))

    def elaborate(self, platform):
        m = Module()
        program = self._program
        threads = program.threads
        layout = program.context
        nodes = self._schedule.nodes

        def view(value):
            return data.View(layout, value)

        # Job control: latch the parameters at start, stay busy until every thread finished.
        params = Signal(program.params_layout)
        busy = Signal()
        active = Signal(threads)
        finished = Signal(threads)
        m.d.comb += [
            self.ctrl.busy.eq(busy),
            self.ctrl.done.eq(busy & finished.all()),
        ]
        with m.If(self.ctrl.start & ~busy):
            m.d.sync += [busy.eq(1), finished.eq(0)]
            for name in program.params:
                m.d.sync += params[name].eq(getattr(self.ctrl, name))
        with m.Elif(self.ctrl.done):
            m.d.sync += busy.eq(0)

        # Launched threads enter the first stage with a zero context.
        launch_ctx = Signal(layout)
        idle = ~(active | finished).bit_select(self.launch.payload, 1)
        launched = Signal()
        m.d.comb += [
            self.launch.ready.eq(busy),
            launch_ctx.tid.eq(self.launch.payload),
            launched.eq(self.launch.valid & busy & idle),
        ]

        # Stages: a context register for a static stage, slots and a scheduler for a parking one.
        outputs = {}
        parked = {}
        for node in nodes:
            stage = node.stage
            if stage.parking:
                unit = ParkingStage(layout, threads=threads, sources=len(node.sources),
                                    arrive_ready=stage.arrive_ready, result_path=stage.result_path,
                                    result_width=stage.result_width(program.element_bits))
                m.submodules[f"stage{node.index}"] = parked[node] = unit
                outputs[node] = (unit.out_valid, unit.out_ctx)
            else:
                outputs[node] = (Signal(name=f"stage{node.index}_valid"),
                                 Signal(layout, name=f"stage{node.index}_ctx"))

        # Edges: a thread follows the one edge out of its stage whose conditions hold.
        conditions = {}

        def condition(source, cond):
            key = (source.index, cond)
            if key not in conditions:
                conditions[key] = Value.cast(cond(view(outputs[source][1]), params)).bool()
            return conditions[key]

        def edge_valid(edge):
            if edge.source is None:
                return launched
            valid = outputs[edge.source][0]
            for cond, polarity in edge.conds:
                taken = condition(edge.source, cond)
                valid = valid & (taken if polarity else ~taken)
            return valid

        def edge_ctx(edge):
            return launch_ctx if edge.source is None else outputs[edge.source][1]

        entering = {}
        for node in nodes:
            if node in parked:
                unit = parked[node]
                for index, edge in enumerate(node.sources):
                    m.d.comb += [
                        unit.arrive_valid[index].eq(edge_valid(edge)),
                        unit.arrive_ctx[index].eq(edge_ctx(edge)),
                    ]
                entering[node] = unit.arrived
            else:
                (edge,) = node.sources
                in_valid, in_ctx = Signal(name=f"stage{node.index}_enter"), view(edge_ctx(edge))
                m.d.comb += in_valid.eq(edge_valid(edge))
                entering[node] = in_valid
                valid, ctx = outputs[node]
                m.d.sync += valid.eq(in_valid)
                with m.If(in_valid):
                    m.d.sync += ctx.eq(in_ctx)
                    if isinstance(node.stage, Compute):
                        for path, value in node.stage.updates(in_ctx, params):
                            m.d.sync += resolve_field(ctx, path).eq(value)

        # Operations of the parking stages, and the locks released by static stages.
        def of_kind(kind):
            return [(node.stage, parked[node]) for node in nodes if isinstance(node.stage, kind)]

        build_offchip(m, ports=self, loads=of_kind(Load), stores=of_kind(Store), params=params,
                      view=view, threads=threads)
        build_local(m, reads=of_kind(LocalRead), writes=of_kind(LocalWrite), params=params,
                    view=view, threads=threads)
        releases = [(node.stage, entering[node], view(edge_ctx(node.sources[0])))
                    for node in nodes if isinstance(node.stage, Release)]
        spinning, critical = build_sync(m, acquires=of_kind(Acquire), releases=releases,
                                        waits=of_kind(Wait), threads=threads)

        # Threads start at launch and finish when they take an edge out of the program.
        exits = [(edge_valid(edge), edge_ctx(edge).tid) for edge in self._schedule.exits]
        exiting = Signal(threads)
        for t in range(threads):
            m.d.comb += exiting[t].eq(Cat(valid & (tid == t) for valid, tid in exits).any())
        starting = Cat(launched & (self.launch.payload == t) for t in range(threads))
        m.d.sync += [
            active.eq((active | starting) & ~exiting),
            finished.eq(finished | exiting),
        ]

        # Probes.
        for t in range(threads):
            m.d.comb += self.thread_state[t].eq(
                Mux(~active[t], ThreadState.IDLE,
                    Mux(spinning[t], ThreadState.SPINNING,
                        Mux(critical[t], ThreadState.CRITICAL, ThreadState.RUNNING))))
        m.d.comb += [
            self.stall.eq(reduce(or_, (unit.stall for unit in parked.values()))),
            self.stage_enable.eq(Cat(entering[node] for node in nodes)),
            self.ops_performed.eq(sum(Mux(entering[node], node.stage.ops, 0) for node in nodes
                                      if isinstance(node.stage, Compute) and node.stage.ops)),
        ]
        return m
