"""The host of a multithreaded pipeline: it starts the threads and waits for them.

:func:`run_threads` latches the run-time parameters with ``ctrl.start``, then starts thread 0,
1, ... on the pipeline's ``launch`` stream, one every ``launch_delay_cycles`` (a host's software
takes that long per thread it starts), and waits for ``ctrl.done``, while
:class:`~sim.memory.MemoryServer` serves the memory ports.

Until the hardware recorder of ``instrument/`` reads them out, the run observes the pipeline's
probe signals from the testbench, once per cycle: the thread states (kept as a
:class:`StateTimeline` of changes), the per-thread stall bits and the operations performed.
"""

from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass

from amaranth.sim import Simulator

from kernels.pipeline import ThreadState

from .memory import MemoryModel, MemoryServer

__all__ = ["HostModel", "StateTimeline", "ThreadRun", "run_threads", "STATE_NAMES"]

#: Thread state names by their 2-bit code.
STATE_NAMES = tuple(state.name.lower() for state in sorted(ThreadState, key=lambda s: s.value))


@dataclass(frozen=True)
class HostModel:
    """How the host starts threads.

    Parameters
    ----------
    launch_delay_cycles : int
        Cycles the host's software takes to start one thread: thread ``t`` is offered on the
        ``launch`` stream from cycle ``t * launch_delay_cycles`` of the job on.
    """
    launch_delay_cycles: int = 20

    def __post_init__(self):
        delay = self.launch_delay_cycles
        if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
            raise ValueError(f"launch_delay_cycles must be an integer >= 0, not {delay!r}")

    def to_json(self):
        return {"launch_delay_cycles": self.launch_delay_cycles}


@dataclass(frozen=True)
class StateTimeline:
    """Every thread's state over a job, as the cycles where any of them changed.

    ``changes[i] = (cycle, states)``: from ``cycle`` on (until the next change) thread ``t`` is in
    state ``states[t]`` (a :data:`STATE_NAMES` index). The first change is at cycle 0; the job
    lasts ``cycles`` cycles.
    """
    threads: int
    cycles: int
    changes: tuple

    def spans(self):
        """``(begin, end, states)`` for every interval of constant states (end exclusive)."""
        ends = [cycle for cycle, _ in self.changes[1:]] + [self.cycles]
        return [(begin, end, states) for (begin, states), end in zip(self.changes, ends)]

    def state_cycles(self):
        """Per thread, the cycles spent in each state: ``[thread][state code]``."""
        counts = [[0] * len(STATE_NAMES) for _ in range(self.threads)]
        for begin, end, states in self.spans():
            for thread, state in enumerate(states):
                counts[thread][state] += end - begin
        return counts

    def cycles_where(self, predicate):
        """Cycles in which ``predicate(states)`` holds."""
        return sum(end - begin for begin, end, states in self.spans() if predicate(states))

    def first_cycle_not_idle(self, thread):
        """The cycle the thread starts running (None if it never does)."""
        for cycle, states in self.changes:
            if states[thread] != ThreadState.IDLE.value:
                return cycle
        return None

    def to_json(self):
        return {"threads": self.threads, "cycles": self.cycles, "state_names": list(STATE_NAMES),
                "changes": [[cycle, list(states)] for cycle, states in self.changes]}


@dataclass(frozen=True)
class ThreadRun:
    """The figures of one job on a multithreaded pipeline.

    ``cycles`` counts the cycles ``busy`` was high, from the cycle after ``start`` to the cycle
    ``done`` was high, both included; every per-cycle figure covers the same cycles.
    """
    cycles: int
    ops: int
    bytes_read: int
    bytes_written: int
    launch_cycles: tuple
    stall_cycles: tuple
    timeline: StateTimeline

    @property
    def threads(self):
        return self.timeline.threads

    @property
    def ops_per_cycle(self):
        return self.ops / self.cycles if self.cycles else 0.0

    @property
    def bytes_per_cycle(self):
        return (self.bytes_read + self.bytes_written) / self.cycles if self.cycles else 0.0

    def state_percent(self):
        """Per thread, the percentage of the job's cycles in each state, by state name."""
        return [{name: 100.0 * count / self.cycles for name, count in zip(STATE_NAMES, counts)}
                for counts in self.timeline.state_cycles()]

    def to_json(self):
        return {
            "cycles": self.cycles,
            "ops": self.ops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops_per_cycle": self.ops_per_cycle,
            "bytes_per_cycle": self.bytes_per_cycle,
            "threads": [
                {"thread": thread, "launch_cycle": launch, "stall_cycles": stalls,
                 **{f"{name}_percent": value for name, value in percent.items()}}
                for thread, (launch, stalls, percent) in enumerate(
                    zip(self.launch_cycles, self.stall_cycles, self.state_percent()))
            ],
            "timeline": self.timeline.to_json(),
        }


def _unpack_states(packed, threads):
    return tuple((packed >> (2 * t)) & 3 for t in range(threads))


def run_threads(pe, storage, *, params, host=HostModel(), memory=MemoryModel(), max_cycles=None,
                vcd=None, progress=None):
    """Run one job on a :class:`kernels.pipeline.Pipeline` with every one of its threads.

    Parameters
    ----------
    pe : Pipeline
    storage : list of int
        Memory contents (modified in place by the PE's writes).
    params : dict of str to int
        Run-time parameters driven on ``ctrl``.
    host : HostModel
    memory : MemoryModel
    max_cycles : int or None
        Give up (``RuntimeError``) when the job is still busy after this many cycles.
    vcd : str or None
        Write a waveform here.
    progress : function or None
        Called with the cycles simulated so far, every 1024 cycles.

    Returns
    -------
    ThreadRun
    """
    threads = pe.threads
    delay = host.launch_delay_cycles
    server = MemoryServer(memory, storage, [pe])
    sim = Simulator(pe)
    sim.add_clock(1e-8)
    sim.add_process(server.process())
    observed = {}

    async def testbench(ctx):
        for name, value in params.items():
            ctx.set(getattr(pe.ctrl, name), value)
        ctx.set(pe.ctrl.start, 1)
        await ctx.tick()
        ctx.set(pe.ctrl.start, 0)

        launch_cycles = []
        offered = False

        def offer(cycle):
            nonlocal offered
            thread = len(launch_cycles)
            if not offered and thread < threads and cycle >= thread * delay:
                ctx.set(pe.launch.payload, thread)
                ctx.set(pe.launch.valid, 1)
                offered = True

        cycle = 0
        ops = 0
        stalls = Counter()
        changes = []
        last = None
        offer(0)
        async for _, _, busy, done, ready, states, stall, performed in ctx.tick().sample(
                pe.ctrl.busy, pe.ctrl.done, pe.launch.ready, pe.thread_state.as_value(),
                pe.stall, pe.ops_performed):
            if not busy:
                raise RuntimeError("the pipeline is not busy after start")
            if offered and ready:
                launch_cycles.append(cycle)
                offered = False
                ctx.set(pe.launch.valid, 0)
            if states != last:
                changes.append((cycle, _unpack_states(states, threads)))
                last = states
            stalls[stall] += 1
            ops += performed
            cycle += 1
            if done:
                break
            if progress is not None and not cycle % 1024:
                progress(cycle)
            if max_cycles is not None and cycle > max_cycles:
                raise RuntimeError(f"the pipeline was still busy after {max_cycles} cycles; thread "
                                   f"states {[STATE_NAMES[s] for s in _unpack_states(states, threads)]}")
            offer(cycle)
        observed.update(cycles=cycle, ops=ops, stalls=stalls, changes=changes,
                        launch_cycles=launch_cycles)

    sim.add_testbench(testbench)
    with sim.write_vcd(vcd) if vcd else nullcontext():
        sim.run()

    stall_cycles = [0] * threads
    for bits, count in observed["stalls"].items():
        for t in range(threads):
            if bits >> t & 1:
                stall_cycles[t] += count
    traffic = server.traffic()
    launches = observed["launch_cycles"]
    return ThreadRun(
        cycles=observed["cycles"],
        ops=observed["ops"],
        bytes_read=traffic.bytes_read,
        bytes_written=traffic.bytes_written,
        launch_cycles=tuple(launches + [None] * (threads - len(launches))),
        stall_cycles=tuple(stall_cycles),
        timeline=StateTimeline(threads, observed["cycles"], tuple(observed["changes"])),
    )
