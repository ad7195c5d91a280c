"""The cycle model of a pipeline program: any :class:`~hwgen.kernels.pipeline.Job` that declares
its shape.

A program's threads share one datapath (``docs/pipeline.md``). The job counts, from its
program's loops and its parameters, how often each thread runs each kind of stage (its
:class:`~hwgen.kernels.pipeline.ProgramShape`); the model prices every stage at its minimum latency by kind (:data:`STAGE_CYCLES`, a load
adding the memory's read latency). The job then takes as long as the slowest of:

* ``chain``: the busiest thread's own path, after its launch (``t x launch_delay``);
* ``read port``: one read request per cycle for every load of every thread;
* ``bandwidth``: the bytes over the memory's bandwidth;
* ``lock``: every critical section after the other, from grant to release;
* ``stage``: one thread per cycle through the most used stage (the pi series' divide step),
  half used while the first thread runs alone, then the last critical section;
* ``blocks`` (blocked GEMM): per block, the preloader's copy or the computing threads' share,
  whichever is longer, as the double buffer overlaps them.

What the minimum latencies leave out (arbitration between threads, the lock's hand-off, the
scheduler of a parking stage serving another thread) and the contention between bounds that
are close are characterised once by short simulations (``benchmarks/characterise.py``,
``characterisation.json``), as the processors of the rapid-estimation paper are: per program
kind, ``cycles = scale x (largest + overlap x second largest)``; ``scale`` applies when the
largest bound is of a kind that was the largest in the characterisation (``bounds``), and is 1
otherwise. A kind of job the characterisation has not seen gets :data:`DEFAULT_FACTORS`: the
largest bound alone (scale 1, overlap 0).
"""

from ..kernels.pipeline.job import ProgramShape
from ..sim.host import HostModel
from ..sim.memory import MemoryModel
from .characterisation import CHARACTERISATION
from .memory import beat_cycles, hold_cycles, jitter_delay
from .prediction import Prediction

__all__ = ["DEFAULT_FACTORS", "STAGE_CYCLES", "factors", "largest_two", "predict_program",
           "program_bounds", "program_shape"]

#: Minimum cycles of a stage by kind (a load adds the memory's read latency, less one).
STAGE_CYCLES = {"compute": 1, "join": 1, "load": 3, "store": 2, "acquire": 2, "release": 1,
                "local_read": 3, "local_write": 2, "wait": 2}


#: The factors of a kind of job the characterisation has not seen: the largest bound alone.
DEFAULT_FACTORS = {"scale": 1.0, "overlap": 0.0, "bounds": []}


def program_shape(job):
    """The job's :class:`~hwgen.kernels.pipeline.ProgramShape`, which it counts from its
    program's loops (:meth:`hwgen.kernels.pipeline.Job.shape`)."""
    shape = job.shape()
    if shape is None:
        raise ValueError(f"program {job.name} declares no shape (Job.shape()): the cycle model "
                         f"needs its loops' trip counts")
    if not isinstance(shape, ProgramShape):
        raise TypeError(f"shape() of program {job.name} must return a ProgramShape, not "
                        f"{shape!r}")
    unknown = {kind for path in shape.paths for kind in path} - set(STAGE_CYCLES)
    if unknown:
        raise ValueError(f"shape() of program {job.name} counts stage kinds "
                         f"{', '.join(sorted(unknown))}; known are {', '.join(STAGE_CYCLES)}")
    return shape


def factors(kind):
    """The characterised factors of a kind of job, or :data:`DEFAULT_FACTORS`."""
    return CHARACTERISATION["programs"].get(kind, DEFAULT_FACTORS)


def _path_cycles(counts, load, store):
    cycles = {**STAGE_CYCLES, "load": load, "store": store}
    return sum(cycles[kind] * n for kind, n in counts.items())


def program_bounds(shape, memory=MemoryModel(), host=HostModel()):
    """Cycles of each bound of the job (see the module), by name."""
    b1 = beat_cycles(memory)
    store = STAGE_CYCLES["store"] + (b1 - 1)
    delay = host.launch_delay_cycles
    # Jitter delays a load by what the loads before it leave: their spacing is the job's
    # cycles, first estimated without jitter, over its reads.
    load = STAGE_CYCLES["load"] - 1 + memory.latency_cycles + hold_cycles(memory) + (b1 - 1)
    if memory.jitter_cycles:
        provisional = max(_path_cycles(p, load, store) for p in shape.paths)
        gap = max(1.0, provisional / max(1, shape.read_beats))
        load += jitter_delay(memory.jitter_cycles, gap)
    bounds = {"chain": max(t * delay + _path_cycles(p, load, store)
                           for t, p in enumerate(shape.paths)),
              "read port": shape.read_beats * b1}
    if memory.bandwidth_bytes_per_cycle is not None:
        bounds["bandwidth"] = (shape.bytes_read + shape.bytes_written) / memory.bandwidth_bytes_per_cycle
    if shape.sections:
        bounds["lock"] = shape.sections * (_path_cycles(shape.section, load, store) + 1)
    if shape.stage_visits:
        # The first thread runs alone until the second starts, using the stage every other
        # cycle; the last critical section follows the stage's last use.
        tail = _path_cycles(shape.section, load, store) + 1 if shape.sections else 0
        bounds["stage"] = shape.stage_visits + delay / 2 + tail
    if shape.blocks:
        blocks, preload, work, reads = shape.blocks
        per_block = max(_path_cycles(preload, load, store), _path_cycles(work, load, store),
                        reads * b1)
        # The last computing thread starts its first block once the first block is loaded
        # and it has been launched.
        start = max(_path_cycles(preload, load, store), (len(shape.paths) - 1) * delay)
        bounds["blocks"] = start + blocks * per_block
    return bounds


def largest_two(bounds):
    """The largest bound and the second largest (0 when there is one)."""
    ordered = sorted(bounds.values(), reverse=True) + [0]
    return ordered[0], ordered[1]


def predict_program(job, memory=MemoryModel(), host=HostModel()):
    """Predict one job of a pipeline program.

    Parameters
    ----------
    job : hwgen.kernels.pipeline.Job
        Any job that declares its shape.
    memory : MemoryModel
    host : HostModel
        Its ``launch_delay_cycles`` spaces the threads' starts.

    Returns
    -------
    Prediction
    """
    shape = program_shape(job)
    bounds = program_bounds(shape, memory, host)
    ideal = program_bounds(shape, MemoryModel(), host)
    fitted = factors(shape.kind)

    def combine(values):
        first, second = largest_two(values)
        seen = max(values, key=values.get) in fitted["bounds"]
        return (fitted["scale"] if seen else 1.0) * (first + fitted["overlap"] * second)

    cycles = combine(bounds)
    bound = max(bounds, key=bounds.get)
    spin = None
    if shape.sections:
        # Threads that are not working on their own path wait for the lock.
        own = sum(_path_cycles(p, 0, 0) for p in shape.paths) / len(shape.paths)
        spin = max(0.0, min(1.0, 1 - own / cycles - host.launch_delay_cycles * (
            len(shape.paths) - 1) / 2 / cycles)) if bound == "lock" else 0.0
    return Prediction(cycles=cycles, ideal_cycles=round(combine(ideal)), ops=shape.ops,
                      bytes_read=shape.bytes_read, bytes_written=shape.bytes_written,
                      bound=bound, spin_share=spin,
                      exact=False)
