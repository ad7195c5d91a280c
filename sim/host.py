"""The host of a multithreaded pipeline: it starts the threads, drains the profile, waits.

:func:`run_threads` runs one job on a :class:`hwgen.kernels.pipeline.Pipeline` with the profiling HMM
of :func:`hwgen.instrument.pipeline_probes` attached from outside (:func:`instrument_pipeline`). The
host latches the run-time parameters with ``ctrl.start``, starts thread 0, 1, ... on the
pipeline's ``launch`` stream, one every ``launch_delay_cycles`` (a host's software takes that
long per thread it starts), and waits for ``ctrl.done``, while :class:`~hwgen.sim.memory.MemoryServer`
serves the memory ports. Meanwhile it drains the HMM's thread-state and sample traces through the
HMM's port every ``drain_interval_cycles``, as a real host would, and reads everything through
that port at the end: every figure of the returned :class:`ThreadRun` comes from the hardware.
"""

from dataclasses import dataclass

import numpy as np

from ..instrument import (THREAD_STATES, HMMLayout, Instrumented, attach,
                          pipeline_attach_options, pipeline_probes)

from .cycle_data import Rates
from .engine import choose_engine, pysim_only
from .memory import MemoryModel
from .readout import HMMReadout
from .recipe import recipe_of, record_recipe

__all__ = ["HostModel", "StateTimeline", "ThreadRun", "instrument_pipeline", "run_threads",
           "STATE_NAMES"]

#: Thread state names by their 2-bit code.
STATE_NAMES = THREAD_STATES


@dataclass(frozen=True)
class HostModel:
    """How the host starts threads and drains the profile.

    Parameters
    ----------
    launch_delay_cycles : int
        Cycles the host's software takes to start one thread: thread ``t`` is offered on the
        ``launch`` stream from cycle ``t * launch_delay_cycles`` of the job on.
    drain_interval_cycles : int or None
        Cycles the host waits between two drains of the HMM's traces while the job runs
        (a drain itself takes a few cycles per record); ``None``: it reads them only at the end.
    """
    launch_delay_cycles: int = 20
    drain_interval_cycles: int | None = 64

    def __post_init__(self):
        delay = self.launch_delay_cycles
        if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
            raise ValueError(f"launch_delay_cycles must be an integer >= 0, not {delay!r}")
        interval = self.drain_interval_cycles
        if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int)
                                     or interval < 1):
            raise ValueError(f"drain_interval_cycles must be a positive integer or None, "
                             f"not {interval!r}")

    def to_json(self):
        return {"launch_delay_cycles": self.launch_delay_cycles,
                "drain_interval_cycles": self.drain_interval_cycles}

    @classmethod
    def from_json(cls, obj):
        return cls(**obj)


class StateTimeline:
    """Every thread's state over a job, as the cycles where any of them changed.

    Change ``i`` is at cycle ``change_cycles[i]``: from then on (until the next change) thread
    ``t`` is in state ``change_states[i, t]`` (a :data:`STATE_NAMES` index). The first change is
    at cycle 0; the job lasts ``cycles`` cycles. The changes are numpy arrays: a long job has
    millions of them.

    Parameters
    ----------
    threads : int
    cycles : int
    change_cycles : array-like of int, shape (changes,)
    change_states : array-like of int, shape (changes, threads)
    """

    __hash__ = None

    def __init__(self, threads, cycles, change_cycles, change_states):
        self.threads = threads
        self.cycles = cycles
        self.change_cycles = np.asarray(change_cycles, dtype=np.int64).reshape(-1)
        self.change_states = np.asarray(change_states, dtype=np.uint8).reshape(-1, threads)
        if len(self.change_cycles) != len(self.change_states):
            raise ValueError(f"{len(self.change_cycles)} change cycles for "
                             f"{len(self.change_states)} rows of states")

    def __eq__(self, other):
        if not isinstance(other, StateTimeline):
            return NotImplemented
        return (self.threads == other.threads and self.cycles == other.cycles
                and np.array_equal(self.change_cycles, other.change_cycles)
                and np.array_equal(self.change_states, other.change_states))

    def __repr__(self):
        return (f"StateTimeline({self.threads} threads, {self.cycles} cycles, "
                f"{len(self.change_cycles)} changes)")

    @property
    def changes(self):
        """``((cycle, states), ...)``, ``states`` a tuple of every thread's state code."""
        return tuple((cycle, tuple(states)) for cycle, states
                     in zip(self.change_cycles.tolist(), self.change_states.tolist()))

    def _durations(self):
        """Cycles from each change to the next (the last to the end of the job)."""
        return np.diff(self.change_cycles, append=np.int64(self.cycles))

    def spans(self):
        """``(begin, end, states)`` for every interval of constant states (end exclusive)."""
        changes = self.changes
        ends = [cycle for cycle, _ in changes[1:]] + [self.cycles]
        return [(begin, end, states) for (begin, states), end in zip(changes, ends)]

    def state_cycles(self):
        """Per thread, the cycles spent in each state: ``[thread][state code]``."""
        durations = self._durations()
        return [[int(durations[self.change_states[:, thread] == state].sum())
                 for state in range(len(STATE_NAMES))] for thread in range(self.threads)]

    def cycles_where(self, predicate):
        """Cycles in which ``predicate(states)`` holds."""
        if not len(self.change_cycles):
            return 0
        combos, which = np.unique(self.change_states, axis=0, return_inverse=True)
        totals = np.zeros(len(combos), dtype=np.int64)
        np.add.at(totals, which.reshape(-1), self._durations())
        return sum(int(total) for states, total in zip(combos.tolist(), totals)
                   if predicate(tuple(states)))

    def first_cycle_not_idle(self, thread):
        """The cycle the thread starts running (None if it never does)."""
        busy = np.flatnonzero(self.change_states[:, thread] != STATE_NAMES.index("idle"))
        return int(self.change_cycles[busy[0]]) if len(busy) else None

    def to_json(self):
        return {"threads": self.threads, "cycles": self.cycles, "state_names": list(STATE_NAMES),
                "changes": [[cycle, states] for cycle, states
                            in zip(self.change_cycles.tolist(), self.change_states.tolist())]}

    @classmethod
    def from_json(cls, obj):
        if list(obj["state_names"]) != list(STATE_NAMES):
            raise ValueError(f"a timeline of states {obj['state_names']!r}, not of "
                             f"{list(STATE_NAMES)!r}")
        changes = obj["changes"]
        return cls(obj["threads"], obj["cycles"], [cycle for cycle, _ in changes],
                   [states for _, states in changes])

    @classmethod
    def from_records(cls, records, threads, first_cycle, cycles):
        """The timeline of a job of ``cycles`` cycles from its first cycle ``first_cycle`` on,
        from the thread-state records (:class:`~hwgen.sim.trace_records.TraceRecords` of fields
        ``thread<t>``): a record before the job counts from cycle 0, the records from the job's
        end on are dropped, and of several records in one cycle the last counts."""
        stamps = records.column("timestamp").astype(np.int64)
        at = np.maximum(stamps - first_cycle, 0)
        states = np.stack([records.column(f"thread{t}") for t in range(threads)], axis=1)
        after = np.flatnonzero(at >= cycles)
        end = after[0] if len(after) else len(at)
        at, states = at[:end], states[:end]
        last = np.append(at[1:] != at[:-1], True) if end else np.zeros(0, dtype=bool)
        return cls(threads, cycles, at[last], states[last])


@dataclass(frozen=True)
class ThreadRun(Rates):
    """The figures of one job on a multithreaded pipeline, as its HMM measured them.

    ``cycles`` counts the cycles ``busy`` was high, from the cycle after ``start`` to the cycle
    ``done`` was high, both included; every per-cycle figure covers the same cycles, and cycle 0
    of ``timeline`` is the first of them, cycle ``job_start_cycle`` of the HMM's timestamps.
    ``launch_cycles`` are the job cycles the host started each thread in.
    ``state_records_dropped`` and ``samples_dropped`` count the records the HMM's buffers had to
    drop because the host did not drain them in time (the timeline misses those changes);
    ``state_cycles`` (per thread, the cycles of the job in each state, by state code) come from
    the HMM's per-thread state profiles and are exact whatever was dropped; the ``minimal``
    preset has no profiles, and its state cycles come from the records (``None`` for every
    thread once one was dropped). ``readout`` holds
    everything the host read, decoded with ``layout``; a run read back from JSON
    (:meth:`from_json`) keeps the figures and has neither (``None``).
    ``state_records`` and ``samples`` count the records the host read; ``saturated`` names the
    HMM values that saturated (their figures are lower bounds).
    """
    cycles: int
    ops: int
    bytes_read: int
    bytes_written: int
    launch_cycles: tuple
    stall_cycles: tuple
    timeline: StateTimeline
    job_start_cycle: int
    sample_period_cycles: int
    state_records_dropped: int
    samples_dropped: int
    readout: HMMReadout | None
    layout: HMMLayout | None
    state_cycles: tuple = ()
    engine: dict = None
    state_records: int = 0
    samples: int | None = None
    saturated: tuple = ()

    @classmethod
    def from_readout(cls, readout, layout, *, launch_cycles, engine=None):
        """The figures of a readout of :func:`hwgen.instrument.pipeline_probes` and its layout.

        A preset without the totals gives ``None`` ops and bytes and takes the job's cycles from
        its start and end; without per-thread stall counters, ``None`` stall cycles; without state
        profiles the cycles per state come from the thread-state records, and are ``None``
        when the host had to drop some; without the sampler its period and drops are ``None``.
        """
        job = {event: r["timestamp"] for r in readout.traces["job"] for event in r["events"]}
        start = job["start"]
        first = start + 1
        # Without a busy-cycle counter the job lasts from the cycle after start to done.
        cycles = readout.values.get("busy_cycles", job.get("done", start) - start)
        threads = len(layout.trace("thread_states").payload)
        timeline = StateTimeline.from_records(readout.traces["thread_states"], threads, first,
                                              cycles)
        dropped = readout["thread_states.dropped"]
        profiled = "thread_state.thread0" in readout.tables
        if profiled:
            state_cycles = tuple(tuple(readout.tables[f"thread_state.thread{t}"][name]
                                       for name in STATE_NAMES) for t in range(threads))
        elif dropped:
            state_cycles = (None,) * threads
        else:
            state_cycles = tuple(tuple(counts) for counts in timeline.state_cycles())
        sampled = "samples" in readout.traces
        return cls(
            cycles=cycles, ops=readout.values.get("ops"),
            bytes_read=readout.values.get("bytes_read"),
            bytes_written=readout.values.get("bytes_written"), launch_cycles=tuple(launch_cycles),
            stall_cycles=tuple(readout.values.get(f"stall_cycles.thread{t}")
                               for t in range(threads)),
            timeline=timeline, job_start_cycle=first,
            sample_period_cycles=layout.trace("samples").period if sampled else None,
            state_records_dropped=dropped,
            samples_dropped=readout["samples.dropped"] if sampled else None, readout=readout,
            layout=layout, state_cycles=state_cycles, engine=engine,
            state_records=len(readout.traces["thread_states"]),
            samples=len(readout.traces["samples"]) if sampled else None,
            saturated=tuple(readout.saturated))

    @property
    def threads(self):
        return self.timeline.threads

    def state_percent(self):
        """Per thread, the percentage of the job's cycles in each state, by state name (from
        the HMM's state profiles); ``None`` for a job of no cycles."""
        return [dict.fromkeys(STATE_NAMES) if not self.cycles or counts is None else
                {name: 100.0 * count / self.cycles for name, count in zip(STATE_NAMES, counts)}
                for counts in self.state_cycles]

    def to_json(self):
        """The figures as JSON (not the readout: its records can run to megabytes, and the
        timeline holds what the reports draw); :meth:`from_json` reads them back. Keys and
        units: docs/json.md."""
        return {
            "measured_by": "hmm",
            "cycles": self.cycles,
            "ops": self.ops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "ops_per_cycle": self.ops_per_cycle,
            "bytes_per_cycle": self.bytes_per_cycle,
            "threads": [
                {"thread": thread, "launch_cycle": launch, "stall_cycles": stalls,
                 **{f"{name}_percent": value for name, value in percent.items()},
                 "state_cycles": None if counts is None else dict(zip(STATE_NAMES, counts))}
                for thread, (launch, stalls, percent, counts) in enumerate(
                    zip(self.launch_cycles, self.stall_cycles, self.state_percent(),
                        self.state_cycles))
            ],
            "job_start_cycle": self.job_start_cycle,
            "sample_period_cycles": self.sample_period_cycles,
            "state_records": self.state_records,
            "state_records_dropped": self.state_records_dropped,
            "samples": self.samples,
            "samples_dropped": self.samples_dropped,
            "saturated": list(self.saturated),
            "timeline": self.timeline.to_json(),
        }

    @classmethod
    def from_json(cls, obj, *, engine=None):
        """The run :meth:`to_json` wrote (without its readout and layout)."""
        threads = obj["threads"]
        return cls(
            cycles=obj["cycles"], ops=obj["ops"], bytes_read=obj["bytes_read"],
            bytes_written=obj["bytes_written"],
            launch_cycles=tuple(t["launch_cycle"] for t in threads),
            stall_cycles=tuple(t["stall_cycles"] for t in threads),
            timeline=StateTimeline.from_json(obj["timeline"]),
            job_start_cycle=obj["job_start_cycle"],
            sample_period_cycles=obj["sample_period_cycles"],
            state_records_dropped=obj["state_records_dropped"],
            samples_dropped=obj["samples_dropped"], readout=None, layout=None,
            state_cycles=tuple(None if t["state_cycles"] is None else
                               tuple(t["state_cycles"][name] for name in STATE_NAMES)
                               for t in threads),
            engine=engine, state_records=obj["state_records"], samples=obj["samples"],
            saturated=tuple(obj["saturated"]))


def instrument_pipeline(pe, *, probes="default", sample_period=64, state_depth=1024,
                        sample_depth=64, word_bits=None, **options):
    """``pe`` with the profiling HMM of :func:`hwgen.instrument.pipeline_probes`, of the preset
    ``probes`` (``minimal``, ``default`` or ``full``).

    The HMM's port is ``word_bits`` wide, by default 64 bits, so that a thread-state record of
    up to 15 threads is one word and draining the trace takes one read per record; ``minimal``
    takes 32 by default, as the port's read registers are a large part of so small an HMM.
    ``options`` go to :func:`hwgen.instrument.attach`.
    """
    if word_bits is None:
        word_bits = 32 if probes == "minimal" else 64
    found = pipeline_probes(pe, probes, sample_period=sample_period, state_depth=state_depth,
                            sample_depth=sample_depth, platform=options.get("platform"))
    design = attach(pe, found, word_bits=word_bits,
                    **{**pipeline_attach_options(probes), **options})
    made_of = recipe_of(pe)
    if made_of is not None:
        record_recipe(design, ["instrument_pipeline", made_of, probes, sample_period, state_depth,
                               sample_depth, word_bits, options])
    return design


def run_threads(pe, storage, *, params, host=HostModel(), memory=MemoryModel(), max_cycles=None,
                vcd=None, progress=None, monitors=(), engine=None, on_simulator=None,
                expected_cycles=None):
    """Run one job on a :class:`hwgen.kernels.pipeline.Pipeline` with every one of its threads.

    Parameters
    ----------
    pe : Pipeline or Instrumented Pipeline
        A bare pipeline gets :func:`instrument_pipeline` with its defaults; an instrumented one
        must carry :func:`hwgen.instrument.pipeline_probes`.
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
    monitors : sequence of async functions
        Background testbenches (each takes the simulator context) that run alongside from the
        first cycle: observers, for example (Amaranth's simulator only).
    engine : str or None
        ``"auto"``, ``"pysim"``, ``"compiled"`` or ``None`` for the default
        (:mod:`hwgen.sim.engine`).
    on_simulator : callable or None
        Called with Amaranth's ``Simulator`` before it runs, for example to attach a
        :class:`hwgen.sim.StepProfiler` (Amaranth's simulator only).
    expected_cycles : int or None
        The job's cycles as predicted (:func:`hwgen.model.predict_program`), for
        ``engine="auto"`` to choose by.

    Returns
    -------
    ThreadRun
    """
    engine = pysim_only(engine, monitors or on_simulator is not None,
                        "monitors and on_simulator")
    design = pe if isinstance(pe, Instrumented) else instrument_pipeline(pe)
    pe = design.design
    try:
        for name in ("job", "thread_states"):
            design.layout.trace(name)
    except KeyError:
        raise ValueError("the pipeline's HMM must carry hwgen.instrument.pipeline_probes()") from None
    threads = pe.threads
    delay = host.launch_delay_cycles
    engine = choose_engine(engine, [design], cycles=expected_cycles, waveforms=vcd is not None)
    readout, launches, info = engine.run_threads(
        design, storage, params=params, threads=threads, launch_delay_cycles=delay,
        memory=memory, drain_interval_cycles=host.drain_interval_cycles, max_cycles=max_cycles,
        vcd=vcd, progress=progress, monitors=monitors, on_simulator=on_simulator)
    return ThreadRun.from_readout(readout, design.layout,
                                  launch_cycles=launches + [None] * (threads - len(launches)),
                                  engine=info)
