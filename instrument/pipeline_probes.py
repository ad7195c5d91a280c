"""The profile of a multithreaded stage-controlled pipeline, from its probe points alone.

Any PE (``kernels/pe.py``) that also exposes the probe points of ``kernels/pipeline`` —
``thread_state`` (2 bits per thread: idle 0, running 1, critical 2, spinning 3), ``stall`` (1 bit
per thread) and ``ops_performed`` (operations this cycle) — gets:

``thread_states``
    A record of every thread's state and a timestamp whenever any thread's state changes
    (:class:`~hwgen.instrument.probe.ThreadStates`), in a ``stop``-mode trace the host drains while the
    pipeline runs; records that find it full are counted in ``thread_states.dropped``.
``thread_state.thread<t>``
    Cycles thread ``t`` spent in each state while the pipeline was busy (a state profile with
    one more state, ``outside``, for the cycles outside the job): exact however the traces are
    drained, so the share of time in each state holds for runs of any length.
``samples``
    Every ``sample_period`` cycles, the running totals ``stall_cycles.thread<t>`` (cycles thread
    ``t`` stalled), ``ops`` (operations performed), ``bytes_read`` and ``bytes_written`` (bytes
    requested at the memory ports), in a ``stop``-mode trace drained likewise.
``job``
    The cycles the job starts and ends (:func:`~hwgen.instrument.pe_probes.job_probe`).
``busy_cycles``, ``bytes_read``, ``bytes_written``, ``ops``, ``stall_cycles.thread<t>``
    The totals (:func:`~hwgen.instrument.pe_probes.traffic_probes`).

That is the ``default`` preset, which :func:`~hwgen.instrument.attach` completes with a profile of
every state machine and counters for every stream it finds. The other presets
(:data:`~hwgen.instrument.system_probes.PROBE_PRESETS`):

``minimal``
    What the profiler of "Nymble-MT" records, for the least hardware: ``thread_states`` and
    ``job``; no state machine or stream is profiled (:func:`pipeline_attach_options`) and the
    snapshot copies the traces' counts alone. A host that drains ``thread_states`` in time has
    every thread's state in every cycle, so the cycles per state follow from the records, and
    the job's cycles from its start and end; ops and bytes are not counted.
``full``
    ``default`` and a counter per source line of the pipeline
    (:func:`~hwgen.instrument.line_probes`), as ``hwgen profile --hmm`` counts them.

A sampled counter is named ``<figure>.<field>`` when it belongs to the thread whose state is
field ``<field>`` of the ``thread_states`` records.
"""

from amaranth.hdl import Const, Mux, Value

from .line_probes import line_probes
from .pe_probes import job_probe, traffic_probes
from .probe import THREAD_STATES, Accumulate, Count, Profile, Sampler, ThreadStates
from .system_probes import check_preset

__all__ = ["pipeline_probes", "pipeline_attach_options"]


def _power_of_two(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value & (value - 1):
        raise ValueError(f"{name} must be a power of two, not {value!r}")
    return value


def pipeline_probes(pe, preset="default", *, sample_period=64, state_depth=1024,
                    sample_depth=64, platform=None):
    """Probes that profile a multithreaded pipeline (see the module).

    Parameters
    ----------
    pe : PE component with the pipeline's probe points
    preset : str
        ``minimal``, ``default`` or ``full`` (see the module).
    sample_period : int
        Cycles between samples, at least 1.
    state_depth : int
        Thread-state records the buffer holds, a power of two.
    sample_depth : int
        Samples the buffer holds, a power of two.
    platform : object
        What ``full`` elaborates ``pe`` for to find its source lines.
    """
    check_preset(preset)
    if isinstance(sample_period, bool) or not isinstance(sample_period, int) or sample_period < 1:
        raise ValueError(f"sample_period must be a positive integer, not {sample_period!r}")
    _power_of_two("state_depth", state_depth)
    _power_of_two("sample_depth", sample_depth)
    stall = Value.cast(pe.stall)
    threads = len(stall)
    recorder = ThreadStates("thread_states", pe.thread_state, threads=threads, depth=state_depth)
    if preset == "minimal":
        return [job_probe(pe), recorder]
    ops = Accumulate("ops", (pe.ops_performed, Const(1, 1)))
    states = Value.cast(pe.thread_state)
    outside = len(THREAD_STATES)
    profiles = [Profile(f"thread_state.thread{t}",
                        Mux(pe.ctrl.busy, states[2 * t:2 * t + 2], outside),
                        (*THREAD_STATES, "outside"))
                for t in range(threads)]
    stalls = [Count(f"stall_cycles.thread{t}", stall[t]) for t in range(threads)]
    totals = [*traffic_probes(pe), ops, *stalls]
    sampled = [probe.name for probe in (*stalls, ops)] + ["bytes_read", "bytes_written"]
    probes = [
        *totals,
        *profiles,
        job_probe(pe),
        recorder,
        Sampler("samples", sampled, period=sample_period, depth=sample_depth, mode="stop"),
    ]
    if preset == "full":
        probes += line_probes(pe, enable=pe.ctrl.busy, platform=platform).probes
    return probes


def pipeline_attach_options(preset):
    """What :func:`~hwgen.instrument.attach` is given for ``preset`` besides the probes:
    ``minimal`` profiles no state machine or stream and snapshots the traces' counts alone."""
    check_preset(preset)
    if preset == "minimal":
        return {"fsms": False, "streams": False, "snapshot": "traces"}
    return {}
