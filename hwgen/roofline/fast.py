"""A design space in seconds: every point's cycles from the cycle model (:mod:`hwgen.model`) and
its resources from the estimate, the Pareto front of performance against area, the best point
for each area budget, and the front's points re-measured by simulation and synthesis.

A window filter's point (:class:`FastPoint`, :func:`explore_fast`) is a PE configuration (a
:class:`~hwgen.roofline.sweep.DesignPoint` with a register policy) and a PE count ``P``: ``P``
PEs, each filtering its own frame, share the memory, so each is predicted with ``1 / P`` of its
bandwidth, and the ``G`` PEs of one memory channel (``C`` channels carry the link in whole
beats, :func:`hwgen.kernels.channels_for`) take at least ``G`` times the beats one PE moves
through its port (:func:`port_beats`; bound ``port``). Resources are one bare PE's estimate
times ``P``; only points whose PEs fit on one device of the board are kept.

A pipeline program's point (:class:`ProgramPoint`, :func:`explore_program`) is a job: a variant,
a thread count and, for vector requests, lanes, on the problem the user gives. Resources are its
bare pipeline's estimate, cached on disk per distinct hardware (a pi job's steps are run-time
parameters, so its hardware is the same for any steps); only points that fit on one device are
kept.

:func:`remeasure` simulates a point and synthesizes its hardware with Yosys, beside what the
model and the estimate predicted.
"""

import io
import itertools
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from amaranth.hdl import UnusedElaboratable

from ..catalog import KERNELS, design_name
from ..kernels import beat_bytes, channels_for
from ..kernels.pipeline import Pipeline
from ..model import predict_program, predict_window
from ..programs import MAX_THREADS, program_name
from ..resources.estimate import estimate
from ..resources.synth import synthesize
from ..sim import (HostModel, MemoryModel, instrument_pipeline, run_threads, run_window_filter,
                   run_window_system)
from .model import RESOURCES, board_scalability, scalability, window_overhead
from .sweep import cached_task

__all__ = ["AREA_BUDGETS", "THREAD_COUNTS", "ExploredPrograms", "FastPoint", "KernelPoint",
           "ProgramPoint", "Remeasured", "best_per_budget", "explore_fast", "explore_kernel", "explore_program",
           "pareto_front", "plot_front", "front_figure", "port_beats", "program_jobs", "remeasure",
           "unmodelled_text"]

#: Area budgets, as shares of one device's LUTs, for the best point of each.
AREA_BUDGETS = (0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


def unmodelled_text(unmodelled):
    """``4 x operator * (64 bits); ...``: what an estimate leaves out, in one cell."""
    return "; ".join(f"{n} x {what}" for what, n in unmodelled.items())


class _Performance:
    """What every predicted point derives from its ``resources``, ``ops``, ``cycles`` and
    ``clock_mhz``."""

    @property
    def lut(self):
        return self.resources["lut"]

    @property
    def ops_per_cycle(self):
        return self.ops / self.cycles

    @property
    def gops(self):
        """Performance: Gops/s at the clock."""
        return self.ops_per_cycle * self.clock_mhz / 1e3


@dataclass(frozen=True)
class FastPoint(_Performance):
    """One predicted design point: ``pes`` PEs of ``point``, resources in total."""
    point: object          # DesignPoint
    tree_stages: str
    pes: int
    resources: dict
    cycles: float          # per frame, every PE on its own frame at once
    ops: int               # of all PEs
    bytes_moved: int       # of all PEs
    bound: str
    clock_mhz: float
    unmodelled: dict = field(default_factory=dict)   # what one PE's estimate leaves out

    #: What :meth:`hardware` is, against the point's resources (``pes`` x one bare PE and the
    #: estimated rest of their system).
    hardware_note = ("the bare system of P PEs behind its memory interconnect (a channel per "
                     "PE), against the point's area of P x one bare PE and the estimated "
                     "interconnect")

    @property
    def label(self):
        return f"{self.point.label}, {self.tree_stages}, {self.pes} PE" + ("s" * (self.pes > 1))

    def hardware(self, bytes_per_cycle=None):
        """The :class:`hwgen.kernels.PESystem` of the point's PEs, bare, as ``sim --pes`` and
        ``synth --pes`` build it, its channels sized for a link of ``bytes_per_cycle``
        (``None``: a channel per PE): ``(design, name)``."""
        system = self.point.system(self.pes, self.point.height, bytes_per_cycle)
        return system, design_name(self.point.kernel, system)

    def simulate(self, memory, *, engine=None):
        """Simulate the point's PEs sharing ``memory``, each on a random frame (seed 0): the
        cycles."""
        system, _ = self.hardware(memory.bandwidth_bytes_per_cycle)
        rng = np.random.default_rng(0)
        images = [rng.integers(0, 256, (self.point.height, self.point.width))
                  for _ in range(system.count)]
        run = run_window_system(system, images, memory=memory, instrument=False, engine=engine)
        return run.cycles

    def row(self):
        p = self.point
        return {"label": self.label, "buffer": p.buffer, "unroll": p.unroll,
                "pipeline": p.pipeline, "tree_stages": self.tree_stages, "pes": self.pes,
                **{r: self.resources[r] for r in RESOURCES}, "cycles": self.cycles,
                "ops_per_cycle": self.ops_per_cycle,
                "bytes_per_cycle": self.bytes_moved / self.cycles, "bound": self.bound,
                "clock_mhz": self.clock_mhz, "gops": self.gops,
                "resources_unmodelled": unmodelled_text(self.unmodelled)}


@dataclass(frozen=True)
class ProgramPoint(_Performance):
    """One predicted configuration of a pipeline program: its job (a
    :class:`hwgen.programs.GemmJob` or :class:`~hwgen.programs.PiJob`), the host that launches
    its threads, and its bare pipeline's resources. Ops are counted as ``hwgen run`` counts them
    (the ``ops`` of the program's stages)."""
    job: object
    host: object           # HostModel
    resources: dict
    cycles: float
    ops: int
    bytes_moved: int
    bound: str
    clock_mhz: float
    unmodelled: dict = field(default_factory=dict)   # what the estimate leaves out

    #: What :meth:`hardware` is, against the point's resources.
    hardware_note = "the bare pipeline the estimate counts"

    @property
    def label(self):
        return self.job.label()

    def hardware(self):
        """The program's bare pipeline: ``(design, name)``."""
        return Pipeline(self.job.program), f"{self.job.program.name}_t{self.job.threads}"

    def simulate(self, memory, *, engine=None):
        """Run the job as ``hwgen run`` does (its HMM attached, which changes no cycle; the
        job's seed draws its data): the cycles."""
        storage, params = self.job.memory()
        run = run_threads(instrument_pipeline(Pipeline(self.job.program)), storage,
                          params=params, host=self.host, memory=memory,
                          max_cycles=self.job.cycle_budget(memory, self.host), engine=engine,
                          expected_cycles=predict_program(self.job, memory, self.host).cycles)
        return run.cycles

    def row(self):
        hardware = self.job.hardware()
        return {"label": self.label, "program": self.job.name,
                "variant": hardware.get("variant"), "threads": self.job.threads,
                "lanes": hardware.get("lanes"),
                **{r: self.resources[r] for r in RESOURCES}, "cycles": self.cycles,
                "ops": self.ops, "ops_per_cycle": self.ops_per_cycle,
                "bytes_per_cycle": self.bytes_moved / self.cycles, "bound": self.bound,
                "clock_mhz": self.clock_mhz, "gops": self.gops,
                "resources_unmodelled": unmodelled_text(self.unmodelled)}


@dataclass(frozen=True)
class KernelPoint(_Performance):
    """One predicted configuration of an image PE of the user's: one PE of ``kernel`` (as
    :data:`hwgen.catalog.KERNELS` names it) with the option ``values``, its resources, and its
    cycles per frame from :func:`hwgen.model.predict_window`."""
    kernel: str
    values: dict
    resources: dict
    cycles: float
    ops: int
    bytes_moved: int
    bound: str
    clock_mhz: float
    unmodelled: dict = field(default_factory=dict)

    #: What :meth:`hardware` is, against the point's resources.
    hardware_note = "the bare PE the estimate counts"

    def build(self):
        return KERNELS[self.kernel](**self.values)

    @property
    def label(self):
        return ", ".join(f"{key} {value}" for key, value in self.values.items()) or "defaults"

    def hardware(self):
        """The bare PE: ``(design, name)``."""
        pe = self.build()
        return pe, design_name(self.kernel, pe)

    def simulate(self, memory, *, engine=None):
        """Run the PE on a random frame (seed 0) against ``memory``: the cycles."""
        pe = self.build()
        image = np.random.default_rng(0).integers(0, 1 << pe.pixel_bits, (pe.height, pe.width))
        return run_window_filter(pe, image, memory=memory, instrument=False,
                                 engine=engine).figures.cycles

    def row(self):
        return {"label": self.label, "kernel": KERNELS[self.kernel].name, **self.values,
                **{r: self.resources[r] for r in RESOURCES}, "cycles": self.cycles,
                "ops_per_cycle": self.ops_per_cycle,
                "bytes_per_cycle": self.bytes_moved / self.cycles, "bound": self.bound,
                "clock_mhz": self.clock_mhz, "gops": self.gops,
                "resources_unmodelled": unmodelled_text(self.unmodelled)}


def explore_kernel(kernel, grid, board, memory=MemoryModel(), *, progress=None):
    """Predict one PE of the user's kernel ``kernel`` (its name in :data:`hwgen.catalog.KERNELS`)
    for every combination of ``grid`` (``{option: [values]}``; an option not in it takes its
    default), estimated on ``board``; keep those that fit one device.

    Raises the kernel's ``ValueError``/``TypeError`` for a value it refuses.

    Returns
    -------
    list of KernelPoint
    """
    kind = KERNELS[kernel]
    available = board.resources.as_counts()
    space = {name: list(values) for name, values in grid.items()}
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # the estimate never elaborates
        for values in itertools.product(*space.values()):
            chosen = dict(zip(space, values))
            pe = kind(**chosen)
            result = estimate(pe, board, name=design_name(kernel, pe))
            resources = result.resources()
            if progress:
                progress(1)
            if scalability(resources, available)[0] < 1:
                continue
            prediction = predict_window(pe, memory)
            found.append(KernelPoint(kernel, chosen, resources, prediction.cycles,
                                     prediction.ops,
                                     prediction.bytes_read + prediction.bytes_written,
                                     prediction.bound, board.clock_mhz, result.unmodelled))
    return found


def _pe_counts(limit):
    """1, 2, 3, 4, 6, 8, 12, 16... up to ``limit`` (and ``limit`` itself)."""
    counts, n = set(), 1
    while n <= limit:
        counts.update({n, n + n // 2} if n > 1 else {1})
        n *= 2
    return sorted({c for c in counts if c <= limit} | {limit})


def port_beats(pe):
    """The beats one frame of ``pe`` moves through the busier way of its memory port: G such
    PEs on one channel of :class:`~hwgen.kernels.PESystem`'s interconnect, which moves a read
    beat and a write beat per cycle, take at least G times as many cycles."""
    traffic = pe.traffic()
    return max(traffic.steps * pe.beats_per_step, -(-traffic.writes // pe.unroll))


def explore_fast(points, board, memory=MemoryModel(), *, tree_policies=("lean", "fast"),
                 max_pes=64, progress=None):
    """Every point of ``points`` with every register policy of ``tree_policies`` (pipelined
    points) and every PE count whose system fits on one device of ``board`` (up to SC,
    :func:`hwgen.roofline.model.board_scalability`, at most ``max_pes``), its channels sized for
    ``memory``'s bandwidth.

    Returns
    -------
    list of FastPoint
    """
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # the estimate never elaborates
        for point in points:
            for policy in tree_policies if point.pipeline else (point.tree_stages,):
                hardware = replace(point, tree_stages=policy)
                pe = hardware.build()
                pe_estimate = estimate(pe, board, name="pe")
                per_pe = pe_estimate.resources()
                bw = memory.bandwidth_bytes_per_cycle
                overhead = window_overhead(pe, board, bytes_per_cycle=bw)
                fits, _ = board_scalability(pe, board, per_pe=per_pe, overhead=overhead,
                                            most=max_pes)
                traffic = pe.traffic()
                beats = port_beats(pe)
                for pes in _pe_counts(fits):
                    # The busiest channel of the interconnect serves ceil(P / C) PEs.
                    per_channel = -(-pes // channels_for(pes, beat_bytes(pe), bw))
                    shared = memory if bw is None else replace(
                        memory, bandwidth_bytes_per_cycle=bw / pes)
                    prediction = predict_window(pe, shared)
                    cycles, bound = prediction.cycles, prediction.bound
                    if per_channel > 1 and per_channel * beats > cycles:
                        cycles, bound = per_channel * beats, "port"
                    found.append(FastPoint(
                        hardware, policy, pes,
                        {r: per_pe[r] * pes + overhead(pes)[r] for r in RESOURCES},
                        cycles, traffic.ops * pes,
                        (traffic.bytes_read + traffic.bytes_written) * pes, bound,
                        board.clock_mhz, pe_estimate.unmodelled))
                if progress:
                    progress(1)
    return found


#: Thread counts of a program's design space: the ladder of PE counts, up to 64.
THREAD_COUNTS = tuple(_pe_counts(MAX_THREADS))


def program_jobs(kind, grid=None, *, name=None):
    """Every job of ``kind`` (a :class:`hwgen.kernels.pipeline.Job` class) on the design space
    ``grid`` (``{option: [values]}``).

    An option not in ``grid`` takes what the job proposes (:meth:`~hwgen.kernels.pipeline.Job.
    explore_values`), else every choice of ``variant``, the thread ladder :data:`THREAD_COUNTS`
    for ``threads``, and its default for any other. Combinations the job refuses are left out
    (blocked GEMM with one thread); a value of ``grid`` that no combination takes raises the
    job's ``ValueError``/``TypeError`` for it. Jobs with equal parameters are kept once.
    """
    grid = dict(grid or {})
    name = name or kind.name
    space = {}
    for option in kind.options:
        if option.name in grid:
            space[option.name] = list(grid[option.name])
            continue
        proposed = kind.explore_values(option.name, grid)
        if proposed is not None:
            space[option.name] = list(proposed)
        elif option.name == "variant" and option.choices:
            space[option.name] = list(option.choices)
        elif option.name == "threads":
            space[option.name] = [t for t in THREAD_COUNTS if option.allows(t)]
        else:
            space[option.name] = [option.default]
    jobs, seen, taken, refusal = [], set(), set(), {}
    for values in itertools.product(*space.values()):
        chosen = dict(zip(space, values))
        # An option of other variants only is left to its default unless the user gave it.
        chosen = {key: value for key, value in chosen.items()
                  if key in grid or kind.option(key).variants is None
                  or chosen.get("variant") in kind.option(key).variants}
        try:
            job = kind(**chosen)
        except (TypeError, ValueError) as error:
            for option, value in chosen.items():
                if option in grid:
                    refusal.setdefault((option, value), error)
            continue
        taken.update((option, value) for option, value in chosen.items() if option in grid)
        key = tuple(sorted(job.parameters().items()))
        if key not in seen:
            seen.add(key)
            jobs.append(job)
    for given, error in refusal.items():
        if given not in taken:
            raise error
    if not jobs:
        raise ValueError(f"no configuration of {name} in this design space")
    return jobs


@dataclass(frozen=True)
class ExploredPrograms:
    """What :func:`explore_program` found: the ``points`` that fit one device, and how many
    pipelines were ``estimated`` here, answered ``from_cache``, and ``dropped`` (estimated and
    too large for one device) or ``skipped`` (more threads than a dropped one)."""
    points: list
    estimated: int
    from_cache: int
    dropped: int
    skipped: int


def explore_program(jobs, board, memory=MemoryModel(), host=HostModel(), *, progress=None):
    """Predict every job of ``jobs`` (of one program) and estimate its bare pipeline on
    ``board``, once per distinct hardware (cached on disk); keep the jobs that fit one device.

    Jobs that differ in their thread count only are taken by rising threads, and once one does
    not fit, those with more threads are skipped unestimated: every thread's context is kept in
    registers, so a pipeline grows with its threads.

    Returns
    -------
    ExploredPrograms
    """
    available = board.resources.as_counts()
    series = {}
    for job in jobs:
        hardware = job.hardware()
        key = tuple(sorted((k, v) for k, v in hardware.items() if k not in ("threads",
                                                                              "block_rows")))
        series.setdefault(key, []).append(job)
    found, estimated, cached, dropped, skipped = [], 0, 0, 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # the estimate never elaborates
        for group in series.values():
            group.sort(key=lambda job: job.threads)
            for at, job in enumerate(group):
                result, hit = cached_task("program_resources", {
                    "program": program_name(job), "hardware": job.hardware(),
                    "board": board.to_json()})
                cached += hit
                estimated += not hit
                if progress:
                    progress(1)
                resources = {r: result[r] for r in RESOURCES}
                if scalability(resources, available)[0] < 1:
                    dropped += 1
                    skipped += len(group) - at - 1
                    if progress:
                        progress(len(group) - at - 1)
                    break
                prediction = predict_program(job, memory, host)
                found.append(ProgramPoint(
                    job, host, resources, prediction.cycles, prediction.ops,
                    prediction.bytes_read + prediction.bytes_written, prediction.bound,
                    board.clock_mhz, result["unmodelled"]))
    return ExploredPrograms(found, estimated, cached, dropped, skipped)


def pareto_front(points):
    """The points no other point beats in both performance (higher) and LUTs (fewer), by LUTs."""
    front = []
    for p in sorted(points, key=lambda p: (p.lut, -p.gops)):
        if not front or p.gops > front[-1].gops:
            front.append(p)
    return front


def best_per_budget(points, device_luts, budgets=AREA_BUDGETS):
    """``[(budget share, LUTs, best point or None)]``: the fastest point within each budget."""
    rows = []
    for share in budgets:
        luts = share * device_luts
        within = [p for p in points if p.lut <= luts]
        rows.append((share, luts, max(within, key=lambda p: p.gops) if within else None))
    return rows


def _plain_number(value, _position=None):
    """A tick label as people write numbers: ``2,000``, ``0.05``."""
    return f"{value:,.0f}" if value >= 1 else f"{value:.3g}"


def plot_front(points, front, *, title):
    """The performance-against-area figure, as PNG bytes: every point, the front joined (see
    :func:`front_figure`)."""
    data = io.BytesIO()
    front_figure(points, front, title=title).savefig(data, format="png", dpi=120)
    return data.getvalue()


def front_figure(points, front, *, title):
    """The matplotlib ``Figure`` of :func:`plot_front`.

    The legend stands below the axes, where it covers no point, and both log axes are labelled
    at 1, 2 and 5 of every decade in plain numbers, which never overlap (matplotlib's default
    also labels the minor ticks of a short axis as ``3x10^3``, and those collide)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    figure = Figure(figsize=(7, 5), layout="constrained")
    ax = figure.add_subplot()
    ax.scatter([p.lut for p in points], [p.gops for p in points], s=6, color="#bbbbbb",
               label=f"{len(points)} design points (model + estimate)")
    ax.plot([p.lut for p in front], [p.gops for p in front], "o-", color="#c0392b", ms=4,
            label=f"Pareto front ({len(front)} points)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        axis.set_major_formatter(FuncFormatter(_plain_number))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("LUTs")
    ax.set_ylabel("performance (Gops/s)")
    ax.set_title(title)
    figure.legend(loc="outside lower center", ncols=2, frameon=False)
    return figure


@dataclass(frozen=True)
class Remeasured:
    """A point re-measured: the model's cycles against the simulated ones, and the estimate's
    LUTs against Yosys's (``synthesized_lut`` is ``None`` when not synthesized)."""
    label: str
    predicted_cycles: float
    simulated_cycles: int
    estimated_lut: int
    synthesized_lut: int | None

    @property
    def cycle_error(self):
        """(model - simulated) / simulated."""
        return (self.predicted_cycles - self.simulated_cycles) / self.simulated_cycles

    @property
    def lut_error(self):
        """(estimate - Yosys) / Yosys; ``None`` when not synthesized or Yosys counts none."""
        if not self.synthesized_lut:
            return None
        return (self.estimated_lut - self.synthesized_lut) / self.synthesized_lut


def remeasure(point, memory, board, *, engine=None, synth=True, progress=False):
    """Simulate ``point`` (a :class:`FastPoint` or :class:`ProgramPoint`) against ``memory`` and,
    with ``synth``, synthesize its hardware (``point.hardware()``; Yosys only, cached) on
    ``board``.

    Returns
    -------
    Remeasured
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        simulated = point.simulate(memory, engine=engine)
        synthesized = None
        if synth:
            design, name = point.hardware()
            synthesized = synthesize(design, board, name=name, fmax=False, require_fit=False,
                                     progress=progress).lut
    return Remeasured(point.label, point.cycles, simulated, point.lut, synthesized)
