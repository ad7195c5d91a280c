"""The cycle model of a pipeline program (GEMM in every variant, the pi series).

A program's threads share one datapath (``docs/pipeline.md``). From the program's structure and
its parameters the model derives, per thread, how often each stage runs (the loops' trip
counts), and prices every stage at its minimum latency by kind (:data:`STAGE_CYCLES`, a load
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
otherwise.
"""

from dataclasses import dataclass

from ..sim.host import HostModel
from ..sim.memory import MemoryModel
from .characterisation import CHARACTERISATION
from .memory import beat_cycles, hold_cycles, jitter_delay
from .prediction import Prediction

__all__ = ["STAGE_CYCLES", "ProgramShape", "largest_two", "predict_program", "program_bounds",
           "program_shape"]

#: Minimum cycles of a stage by kind (a load adds the memory's read latency, less one).
STAGE_CYCLES = {"compute": 1, "join": 1, "load": 3, "store": 2, "acquire": 2, "release": 1,
                "local_read": 3, "local_write": 2, "wait": 2}


@dataclass(frozen=True)
class ProgramShape:
    """What a program does, counted from its structure and parameters.

    ``paths`` holds each thread's stage counts by kind; ``read_beats`` and ``write_beats`` the
    off-chip requests of the job; ``sections`` the critical sections and ``section`` the stage
    counts of one; ``stage_visits`` the visits of the most used stage.
    """
    kind: str
    paths: tuple
    read_beats: int
    write_beats: int
    bytes_read: int
    bytes_written: int
    ops: int
    sections: int = 0
    section: dict = None
    stage_visits: int = 0
    blocks: tuple = None


def _share(count, thread, threads):
    """Iterations ``thread`` runs of ``for i in range(thread, count, threads)``."""
    return len(range(thread, count, threads))


def _add(*parts):
    total = {}
    for scale, counts in parts:
        for kind, n in counts.items():
            total[kind] = total.get(kind, 0) + scale * n
    return total


def program_shape(job):
    """The :class:`ProgramShape` of a :class:`hwgen.programs.GemmJob` or :class:`PiJob`."""
    if job.name == "pi":
        return _pi_shape(job)
    return _GEMM[job.variant](job)


def _element_bytes(bits):
    return -(-bits // 8)


def _naive(job):
    d, threads, eb = job.dim, job.threads, _element_bytes(job.element_bits)
    section = {"load": 1, "compute": 1, "store": 1, "release": 1}
    paths = []
    for t in range(threads):
        k = _share(d, t, threads)
        per_output = _add((1, {"join": 1, "compute": 3, "acquire": 1}), (1, section),
                          (k, {"load": 2, "compute": 1}))
        paths.append(_add((d * d, per_output)))
    reads = 2 * d ** 3 + threads * d * d
    return ProgramShape("gemm_naive", tuple(paths), reads, threads * d * d, reads * eb,
                        threads * d * d * eb, 2 * d ** 3 + threads * d * d,
                        sections=threads * d * d, section=section)


def _rows(job, vector):
    d, threads, eb = job.dim, job.threads, _element_bytes(job.element_bits)
    lanes = job.lanes if vector else 1
    inner = d // lanes
    step = {"load": 1 + lanes if vector else 2, "compute": 1}
    paths = []
    for t in range(threads):
        rows = _share(d, t, threads)
        per_row = _add((d * inner, step), (d, {"store": 1, "compute": 1}), (1, {"compute": 1}))
        paths.append(_add((1, {"compute": 1}), (rows, per_row)))
    beats = d ** 3 // lanes + d ** 3 if vector else 2 * d ** 3
    return ProgramShape(f"gemm_{'vector' if vector else 'nocritical'}", tuple(paths), beats,
                        d * d, 2 * d ** 3 * eb, d * d * eb, 2 * d ** 3)


def _blocked(job):
    from ..kernels.programs import default_block_rows
    d, threads, lanes, eb = job.dim, job.threads, job.lanes, _element_bytes(job.element_bits)
    rows = default_block_rows(d, threads, lanes)
    per_row = d // lanes
    per_block = rows * per_row
    blocks = d // rows
    workers = threads - 1
    preload = _add((per_block, {"load": 1, "local_write": 1, "compute": 1}),
                   (1, {"wait": 1, "compute": 1}))
    # A segment's loop starts with a compute (a join heads it), and the carry loop, which may
    # run zero times, merges into a join before the next static stage.
    segment = _add((1, {"compute": 3, "join": 2}), (per_row, {"local_read": 1}),
                   (d, {"load": 1, "compute": 1}), (1, {"store": 1}))
    most = -(-per_block // workers)
    work = _add((1, {"wait": 1, "compute": 2, "join": 1}), (most, segment))
    paths = [_add((blocks, preload))] + [_add((blocks, work))] * workers
    read_beats = d * d // lanes + d ** 3 // lanes
    return ProgramShape("gemm_blocked", tuple(paths), read_beats, d * d // lanes,
                        (d * d + d ** 3) * eb, d * d * eb, 2 * d ** 3,
                        blocks=(blocks, preload, work, per_block + per_block * d))


def _pi_shape(job):
    threads, f, steps = job.threads, job.frac_bits, job.steps
    divide = f + 3
    section = {"load": 1, "compute": 1, "store": 1, "release": 1}
    paths = []
    for t in range(threads):
        n = _share(steps, t, threads)
        body = {"join": 1 + divide, "compute": 3 + divide}
        paths.append(_add((1, {"compute": 1, "acquire": 1}), (1, section), (n, body)))
    eb = _element_bytes(32)
    return ProgramShape("pi", tuple(paths), threads, threads, threads * eb, threads * eb,
                        steps * (5 + divide) + 2 * threads, sections=threads, section=section,
                        stage_visits=steps * divide)


_GEMM = {"naive": _naive, "nocritical": lambda job: _rows(job, False),
         "vector": lambda job: _rows(job, True), "blocked": _blocked}


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
    job : hwgen.programs.GemmJob or PiJob
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
    factors = CHARACTERISATION["programs"][shape.kind]

    def combine(values):
        first, second = largest_two(values)
        seen = max(values, key=values.get) in factors["bounds"]
        return (factors["scale"] if seen else 1.0) * (first + factors["overlap"] * second)

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
