"""Measure design points: simulations and resource figures as tasks cached on disk, run in
worker processes or on a Dask cluster (:mod:`hwgen.roofline.cluster`).

A :class:`DesignPoint` is one PE configuration. :func:`measure` gives each point a
:class:`Measurement`: the full frame's figures of one PE (simulated with an ideal memory, scaled
from two short frames where the frame is taller, see :mod:`hwgen.roofline.frame_scaling`) and the
resources of one bare PE (estimated or synthesized; with Fmax when asked).
:func:`simulate_systems` runs systems of several PEs that share one memory. ``hwgen roofline``
and ``hwgen explore`` measure through these two functions.

Every task's result is cached as a small JSON file in the ``sweep`` folder of hwgen's cache
(:mod:`hwgen.sim.cache`), keyed by a hash of the task's full description, the tool versions and
every file of hwgen's code (:func:`hwgen.versions.source_hash`); a sweep that was stopped resumes
from what it finished.
"""

import gc
import hashlib
import json
import multiprocessing
import os
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace

import numpy as np
from amaranth.hdl import UnusedElaboratable

from ..boards import Board, BoardError, cost_table
from ..sim.cache import cache_dir as cache_folder
from ..sim.engine import EngineUnavailable, engine_named, resolve_engine
from ..sim import CycleData, HostModel, MemoryModel, run_window_filter, run_window_system, window_system

from ..catalog import KERNELS, design_name, kernel_info, make_window_filter, resolve_board
from ..errors import HwgenError, ParameterError
from ..kernels.pipeline import Pipeline
from ..programs import PROGRAMS, program_of
from ..progress import Progress, note
from ..resources.estimate import estimate
from .frame_scaling import FrameFigures, row_unit, scale_frames, short_heights, units_height
from ..resources.synth import synthesize
from ..versions import source_hash, tool_versions

__all__ = ["RESOURCE_METHODS", "DesignPoint", "KernelDesignPoint", "Measurement", "cache_dir", "cached_task",
           "check_resources_method", "design_grid", "measure", "point_from_json", "run_tasks", "simulate_systems",
           "system_height"]

#: Where resources per PE come from.
RESOURCE_METHODS = ("estimate", "synth")
#: Output rows, at least, of the frames of a simulated system (rounded up to whole units of
#: :mod:`hwgen.roofline.frame_scaling`): enough that the steady state outweighs the fill and drain, whose
#: traffic differs from it.
SYSTEM_ROWS = 32


@dataclass(frozen=True)
class DesignPoint:
    """One PE configuration of a window filter (tree registers and credits at their defaults).

    Parameters
    ----------
    kernel : str
        A kernel of :data:`hwgen.catalog.KERNELS`.
    rows, cols : int
        Window size N x M.
    mask : str or tuple of tuple of int
        Structuring element: a shape (``rect``, ``cross``, ``ellipse``) or its 0/1 rows.
    width, height : int
        The full frame.
    unroll : int
        Outputs per cycle U.
    buffer : str
        ``none``, ``smart`` or ``line``.
    pipeline : bool
        Pipelined or one step at a time.
    tree_stages : str
        Register policy of a pipelined point (``lean`` or ``fast``, see
        :func:`hwgen.catalog.board_tree_policy`).
    """
    kernel: str
    rows: int
    cols: int
    mask: str | tuple
    width: int
    height: int
    unroll: int
    buffer: str
    pipeline: bool
    tree_stages: str = "lean"

    @property
    def pe_tree_stages(self):
        """What the PE is built with: the policy when pipelined, the default otherwise."""
        return self.tree_stages if self.pipeline else None

    def build(self, height=None):
        """The :class:`hwgen.kernels.WindowFilter` of this point (of another ``height`` if given);
        invalid parameters raise :class:`HwgenError`."""
        return make_window_filter(
            self.kernel, size=(self.rows, self.cols), mask=self.mask, width=self.width,
            height=self.height if height is None else height, unroll=self.unroll,
            buffer=self.buffer, pipeline=self.pipeline, tree_stages=self.pe_tree_stages)

    def system(self, pes, height, bytes_per_cycle=None):
        """A :class:`hwgen.kernels.PESystem` of ``pes`` PEs of this point on frames of ``height``
        rows, addressable side by side, its memory channels sized for a link of
        ``bytes_per_cycle`` (``None``: unlimited, a channel per PE)."""
        return window_system(pes, width=self.width, height=height, op=kernel_info(self.kernel).op,
                             size=(self.rows, self.cols), mask=self.mask, unroll=self.unroll,
                             buffer=self.buffer, pipeline=self.pipeline,
                             tree_stages=self.pe_tree_stages, bytes_per_cycle=bytes_per_cycle)

    @property
    def label(self):
        """Short name for plots and tables: ``smart U8`` (``, no pipeline`` when unpipelined)."""
        return f"{self.buffer} U{self.unroll}" + ("" if self.pipeline else ", no pipeline")

    def to_json(self):
        return {"kernel": self.kernel, "rows": self.rows, "cols": self.cols, "mask": self.mask,
                "width": self.width, "height": self.height, "unroll": self.unroll,
                "buffer": self.buffer, "pipeline": self.pipeline, "tree_stages": self.tree_stages}

    @property
    def mask_name(self):
        """The mask's shape, or ``custom`` for explicit rows."""
        return self.mask if isinstance(self.mask, str) else "custom"

    @classmethod
    def from_json(cls, data):
        mask = data["mask"]
        return cls(**dict(data, mask=mask if isinstance(mask, str)
                          else tuple(tuple(row) for row in mask)))


@dataclass(frozen=True)
class KernelDesignPoint:
    """One configuration of an image PE of the user's (:mod:`hwgen.kernels.pe`).

    Its datapath is its own: ``buffer`` says ``own``, ``unroll`` is its ``unroll`` option (1
    without one), and it counts as pipelined (no unpipelined twin on the roofline).

    Parameters
    ----------
    kernel : str
        Its name in :data:`hwgen.catalog.KERNELS` (``file.py:Name`` or ``module:Name``).
    values : tuple of (str, object)
        Its options' values (the others take their defaults).
    """
    kernel: str
    values: tuple

    buffer = "own"
    pipeline = True

    @property
    def options(self):
        return dict(self.values)

    def build(self, height=None):
        """The PE (of another ``height`` if given)."""
        options = self.options
        if height is not None:
            options["height"] = height
        return KERNELS[self.kernel](**options)

    @property
    def width(self):
        return self.build().width

    @property
    def height(self):
        return self.build().height

    @property
    def unroll(self):
        return self.options.get("unroll", 1)

    def system(self, pes, height):
        raise ValueError("systems of PEs behind one port are built of window filters only")

    @property
    def label(self):
        return ", ".join(f"{key} {value}" for key, value in self.values) or "defaults"

    @property
    def title(self):
        """What the roofline's title says of the kernel."""
        return KERNELS[self.kernel].name

    def to_json(self):
        return {"own_kernel": self.kernel, "values": [list(pair) for pair in self.values]}

    @classmethod
    def from_json(cls, data):
        return cls(data["own_kernel"], tuple(tuple(pair) for pair in data["values"]))


def point_from_json(data):
    """A :class:`DesignPoint`, :class:`KernelDesignPoint` or
    :class:`~hwgen.roofline.program.ProgramDesignPoint` from its JSON."""
    if "program" in data:
        from .program import ProgramDesignPoint
        return ProgramDesignPoint.from_json(data)
    return (KernelDesignPoint if "own_kernel" in data else DesignPoint).from_json(data)


def design_grid(kernel, *, unrolls, buffers, pipelines=(True,), size=(3, 3), mask="rect",
                width=512, height=512, tree_stages="lean"):
    """Every combination of ``unrolls`` x ``buffers`` x ``pipelines``, buffer-major, with the
    register policy ``tree_stages`` for pipelined points.

    Raises :class:`HwgenError` naming the first point that cannot be built.
    """
    kernel_info(kernel)
    points = [DesignPoint(kernel, size[0], size[1], mask, width, height, unroll, buffer, pipeline,
                          tree_stages)
              for buffer in buffers for unroll in unrolls for pipeline in pipelines]
    with warnings.catch_warnings():
        # The filters are built to check their parameters only.
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            for point in points:
                try:
                    point.build()
                except ParameterError as error:
                    raise ParameterError(error.parameter, f"{error.message} (design point "
                                                          f"{point.label})") from None
                except HwgenError as error:
                    raise HwgenError(f"design point {point.label}: {error}") from None
        finally:
            gc.collect()
    return points


@dataclass(frozen=True)
class Measurement:
    """What :func:`measure` found for one design point on one board.

    Parameters
    ----------
    point : DesignPoint
    name : str
        The PE's full name, which says every parameter (:func:`hwgen.catalog.design_name`).
    frame : FrameFigures
        One PE over the full frame with an ideal memory (latency 1, unlimited bandwidth).
    resources : dict
        ``{"lut", "ff", "bram", "dsp"}`` of one bare PE (without its HMM).
    resources_source : str
        How they were found (estimate and cost table, or the synthesis command).
    fmax_mhz : float or None
        Fmax from nextpnr when it was measured.
    fmax_source : str or None
        How Fmax was measured.
    resources_unmodelled : dict
        What the resource figures leave out, by count: the estimator's unmodelled parts
        (:attr:`hwgen.resources.estimate.Estimate.unmodelled`), or synthesized cell types hwgen
        does not know (:attr:`hwgen.resources.synth.SynthResult.unknown_cells`, as ``cell X``).
    """
    point: DesignPoint
    name: str
    frame: FrameFigures
    resources: dict
    resources_source: str
    fmax_mhz: float | None = None
    fmax_source: str | None = None
    resources_unmodelled: dict = field(default_factory=dict)

    def to_json(self):
        return {"point": self.point.to_json(), "name": self.name, "label": self.point.label,
                "frame": self.frame.to_json(), "resources_per_pe": dict(self.resources),
                "resources_source": self.resources_source,
                "resources_unmodelled": dict(self.resources_unmodelled),
                "fmax_mhz": self.fmax_mhz, "fmax_source": self.fmax_source}

    @classmethod
    def from_json(cls, data):
        return cls(point=point_from_json(data["point"]), name=data["name"],
                   frame=FrameFigures.from_json(data["frame"]),
                   resources=dict(data["resources_per_pe"]),
                   resources_source=data["resources_source"], fmax_mhz=data["fmax_mhz"],
                   fmax_source=data["fmax_source"],
                   resources_unmodelled=dict(data["resources_unmodelled"]))


# -- tasks ---------------------------------------------------------------------------------------

def _random_frames(count, width, height, pixel_bits=8):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 1 << pixel_bits, size=(height, width)) for _ in range(count)]


def _simulate_frame(spec):
    """One PE on one frame with an ideal memory: its CycleData as JSON (without the readout, with
    the names of the values that saturated)."""
    point = point_from_json(spec["point"])
    pe = point.build(height=spec["height"])
    (image,) = _random_frames(1, pe.width, pe.height, pe.pixel_bits)
    figures = run_window_filter(pe, image, engine=spec["engine"]).figures
    return replace(figures, hmm=None).to_json()


def _simulate_system(spec):
    """``pes`` PEs on one frame each, sharing a memory of the given bandwidth."""
    point = DesignPoint.from_json(spec["point"])
    system = point.system(spec["pes"], spec["height"], spec["bandwidth_bytes_per_cycle"])
    memory = MemoryModel(bandwidth_bytes_per_cycle=spec["bandwidth_bytes_per_cycle"])
    run = run_window_system(system, _random_frames(system.count, point.width, spec["height"]),
                            memory=memory, engine=spec["engine"])
    pe = system.pes[0]
    traffic = pe.traffic()
    # Each memory channel moves a read beat and a write beat per cycle at most.
    channels = system.interconnect.channels
    port = channels * traffic.ops / (traffic.steps * pe.beats_per_step) if traffic.steps \
        else None
    return {"cycles": run.cycles, "ops": run.ops, "bytes_read": run.bytes_read,
            "bytes_written": run.bytes_written, "saturated": list(run.saturated),
            "port_ops_per_cycle": port, "channels": channels}


def _measure_resources(spec):
    """Resources of one bare PE, and Fmax when asked."""
    point = point_from_json(spec["point"])
    board = Board.from_json(spec["board"])
    pe = point.build()
    name = design_name(point.kernel, pe)
    result = {"name": name, "fmax_mhz": None, "fmax_source": None}
    if spec["method"] == "estimate":
        found = estimate(pe, board, name=name)
        proxy = ", a proxy" if found.proxy else ""
        result.update(found.resources(), source=f"estimate ({found.cost_family} cost table{proxy})",
                      unmodelled=found.unmodelled)
    if spec["method"] == "synth" or spec["fmax"]:
        found = synthesize(pe, board, name=name, fmax=spec["fmax"])
        if spec["method"] == "synth":
            family = board.toolchain.yosys_family
            script = found.command.split()[0] + (f" -family {family}" if family else "")
            result.update(found.resources(), source=f"synth (Yosys {script})",
                          unmodelled={f"cell {cell}": n for cell, n in found.unknown_cells.items()})
        if spec["fmax"] and found.fmax_mhz is not None:
            result.update(fmax_mhz=found.fmax_mhz,
                          fmax_source=f"nextpnr, median of {found.seeds} seeds "
                                      f"({found.fmax_min_mhz:.1f}-{found.fmax_max_mhz:.1f} MHz)")
    return result


def _program_resources(spec):
    """Resources of a pipeline program's bare pipeline, estimated: ``program`` names it,
    ``hardware`` holds its job's ``hardware()`` parameters."""
    program = program_of(spec["program"], spec["hardware"])
    found = estimate(Pipeline(program), Board.from_json(spec["board"]), name=program.name)
    return {**found.resources(), "unmodelled": found.unmodelled}


def _simulate_program(spec):
    """One job of a pipeline program (``program`` names it, ``arguments`` are its own) with an
    ideal memory: its cycles, ops, bytes and the HMM values that saturated."""
    from .program import simulate_job   # it places programs with this module's tasks
    job = PROGRAMS[spec["program"]](**spec["arguments"])
    run = simulate_job(job, host=HostModel(launch_delay_cycles=spec["launch_delay_cycles"]),
                       engine=spec["engine"])
    return {"cycles": run.cycles, "ops": run.ops, "bytes_read": run.bytes_read,
            "bytes_written": run.bytes_written, "saturated": list(run.saturated)}


_TASKS = {"frame": _simulate_frame, "system": _simulate_system, "resources": _measure_resources,
          "program_resources": _program_resources, "program_run": _simulate_program}

def _run_task(kind, spec):
    return _TASKS[kind](spec)


def cache_dir():
    """Folder of cached sweep tasks (see :mod:`hwgen.sim.cache`)."""
    return cache_folder("sweep")


def _task_key(kind, spec):
    blob = json.dumps({"kind": kind, "spec": spec, "source": source_hash(),
                       "tool_versions": tool_versions()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _read_cached(path):
    try:
        return json.loads(path.read_text())["result"]
    except (OSError, ValueError, KeyError):
        return None


def _write_cached(path, kind, spec, result):
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps({"kind": kind, "spec": spec, "tool_versions": tool_versions(),
                                   "result": result}, indent=1) + "\n")
    partial.replace(path)


def cached_task(kind, spec):
    """Run one task of :func:`run_tasks` in this process unless the cache holds its result:
    ``(result, whether it came from the cache)``."""
    path = cache_dir() / f"{kind}-{_task_key(kind, spec)}.json"
    found = _read_cached(path)
    if found is not None:
        return found, True
    result = _run_task(kind, spec)
    _write_cached(path, kind, spec, result)
    return result, False


def run_tasks(tasks, *, jobs=1, progress=False, desc="measuring", points=None, cluster=None):
    """Run ``(kind, spec)`` tasks, each at most once, reading and filling the cache.

    Parameters
    ----------
    tasks : list of (str, dict)
        ``kind`` is ``frame``, ``system``, ``resources``, ``program_resources`` or ``program_run``; ``spec`` is
        plain data.
    jobs : int
        Worker processes; 1 runs the tasks in this process. Not used with a ``cluster``.
    progress : bool
        Say on stderr how many tasks the cache answers, and show a progress bar of finished
        design points on a terminal (elsewhere a line when they are slow).
    points : list of int or None
        How many consecutive tasks make each design point, for the progress bar (default: one
        task per point).
    cluster : hwgen.roofline.cluster.Cluster or None
        Run the tasks on a Dask cluster's workers instead; the bar shows how many there are.

    Returns
    -------
    list
        Every task's result, in order; each is written into this machine's cache as it arrives.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError("jobs", f"must be a positive integer, not {jobs!r}")
    folder = cache_dir()
    keys = [_task_key(kind, spec) for kind, spec in tasks]
    unique = dict(zip(keys, tasks))
    results = {}
    for key, (kind, _) in unique.items():
        found = _read_cached(folder / f"{kind}-{key}.json")
        if found is not None:
            results[key] = found
    pending = [key for key in unique if key not in results]
    if progress and results:
        note(f"{desc}: {len(results)} of {len(unique)} measurements answered from the cache "
             f"({folder})")
    # The tasks each design point still waits for.
    waiting, start = [], 0
    for count in [1] * len(tasks) if points is None else points:
        waiting.append({key for key in keys[start:start + count] if key not in results})
        start += count

    def where():
        return desc if cluster is None else f"{desc} on {cluster.workers} Dask workers"

    with Progress(where(), total=len(waiting), unit="point", enabled=progress) as bar:
        bar.update_to(sum(not keys_left for keys_left in waiting))

        def finish(key, result):
            kind, spec = unique[key]
            _write_cached(folder / f"{kind}-{key}.json", kind, spec, result)
            results[key] = result
            for keys_left in waiting:
                if key in keys_left:
                    keys_left.discard(key)
                    if not keys_left:
                        bar.update(1)
            if cluster is not None and progress:
                bar.describe(where())

        if cluster is None and (jobs == 1 or len(pending) < 2):
            for key in pending:
                finish(key, _run_task(*unique[key]))
        elif pending:
            pool = cluster.executor() if cluster is not None else ProcessPoolExecutor(
                max_workers=min(jobs, len(pending)),
                mp_context=multiprocessing.get_context("spawn"))
            try:
                running = {pool.submit(_run_task, *unique[key]): key for key in pending}
                while running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        finish(running.pop(future), future.result())
            finally:
                pool.shutdown(wait=False, cancel_futures=True)
    return [results[key] for key in keys]


# -- measurements --------------------------------------------------------------------------------

def check_resources_method(board, resources, fmax):
    """Fail early, with one line, when ``board`` cannot give the figures asked for."""
    if resources not in RESOURCE_METHODS:
        raise ParameterError("resources", f"must be one of {', '.join(RESOURCE_METHODS)}, "
                                          f"not {resources!r}")
    if resources == "estimate":
        try:
            cost_table(board.toolchain.cost_family)
        except BoardError as error:
            raise ParameterError("resources", f"estimate on {board.name}: {error}") from None
    if (resources == "synth" or fmax) and not board.toolchain.has_open_flow:
        parameter, asked, instead = (("resources", "synth", "estimate") if resources == "synth"
                                     else ("clock", "fmax", "board or MHz"))
        raise ParameterError(parameter, f"{asked} needs an open synthesis flow, which "
                                        f"{board.name} ({board.family}) has not; give {instead}")
    if fmax and not board.toolchain.has_place_and_route:
        raise ParameterError("clock", f"fmax needs place and route, which runs here for ecp5 and "
                                      f"ice40 boards, not {board.name} ({board.family}); give "
                                      f"board or MHz")


def _frame_heights(point, engine):
    """Rows of the frames that give a point's figures: the full frame with the compiled engine,
    which simulates it in seconds once compiled; with Amaranth's simulator or ``auto``, two
    short frames to scale from when the full frame is taller (``auto`` then runs each on the
    engine that is faster for it)."""
    whole = isinstance(point, KernelDesignPoint) or (engine != "auto"
                                                      and engine_named(engine).full_frames)
    if whole:
        return (point.height,)
    return short_heights(point.rows, point.height, point.buffer, point.unroll) or (point.height,)


def _engine(engine):
    try:
        return resolve_engine(engine)
    except EngineUnavailable as error:
        raise HwgenError(str(error)) from None
    except ValueError as error:
        name, _, rest = str(error).partition(" ")
        if name == "engine":
            raise ParameterError("engine", rest) from None
        raise HwgenError(str(error)) from None     # HWGEN_ENGINE, named as the user set it


def measure(points, board, *, resources="estimate", fmax=False, jobs=1, progress=False,
            engine=None, cluster=None):
    """Measure every design point on ``board``: a list of :class:`Measurement`, in order.

    Parameters
    ----------
    points : list of DesignPoint
    board : Board or str
    resources : str
        ``estimate`` (primitive counting, fast) or ``synth`` (Yosys).
    fmax : bool
        Also place and route every point for its Fmax (ECP5 and iCE40 boards).
    jobs, progress, cluster
        See :func:`run_tasks`.
    engine : str or None
        The simulation engine (:mod:`hwgen.sim.engine`): the compiled engine simulates every
        full frame, Amaranth's simulator two short frames where the full frame is taller.
    """
    board = resolve_board(board)
    check_resources_method(board, resources, fmax)
    engine = _engine(engine)
    tasks, per_point = [], []
    for point in points:
        frames = [("frame", {"point": point.to_json(), "height": h, "engine": engine})
                  for h in _frame_heights(point, engine)]
        tasks += frames
        tasks.append(("resources", {"point": point.to_json(), "board": board.to_json(),
                                    "method": resources, "fmax": fmax}))
        per_point.append(len(frames) + 1)
    results = run_tasks(tasks, jobs=jobs, progress=progress, points=per_point, cluster=cluster)
    found = iter(results)
    measurements = []
    for point in points:
        frames = [CycleData.from_json(next(found)) for _ in _frame_heights(point, engine)]
        if len(frames) == 1:
            frame = FrameFigures.whole(point.width, point.height, frames[0])
        else:
            frame = scale_frames(point.rows, point.width, point.height, point.buffer,
                                 point.unroll, frames)
        res = next(found)
        measurements.append(Measurement(
            point=point, name=res["name"], frame=frame,
            resources={k: res[k] for k in ("lut", "ff", "bram", "dsp")},
            resources_source=res["source"], fmax_mhz=res["fmax_mhz"],
            fmax_source=res["fmax_source"], resources_unmodelled=res["unmodelled"]))
    return measurements


def system_height(point):
    """Rows of the frames a system of ``point``'s PEs runs: :data:`SYSTEM_ROWS` output rows or a
    little more, or the full frame when that is not taller."""
    units = -(-SYSTEM_ROWS // row_unit(point.buffer, point.unroll))
    return units_height(point.rows, point.height, point.buffer, point.unroll, units) or point.height


def simulate_systems(requests, *, jobs=1, progress=False, engine=None, cluster=None):
    """Simulate systems of PEs that share one memory.

    ``requests`` are ``(point, pes, bandwidth_bytes_per_cycle)``; each system runs ``pes`` PEs of
    ``point`` on frames of :func:`system_height` rows. Returns, per request, a dict with the
    frames' ``height``, the system's ``cycles``, ``ops``, ``bytes_read``, ``bytes_written``,
    ``saturated`` (the HMM values that saturated, ``pe<i>.<name>``) and, as ``pe``, the figures
    of one PE alone on the same frame with an ideal memory (a :class:`hwgen.sim.CycleData`).
    ``engine`` is the simulation engine; ``jobs``, ``progress`` and ``cluster``: see
    :func:`run_tasks`.
    """
    engine = _engine(engine)
    tasks = []
    for point, pes, bandwidth in requests:
        if isinstance(pes, bool) or not isinstance(pes, int) or pes < 1:
            raise ParameterError("pes", f"must be a positive integer, not {pes!r}")
        height = system_height(point)
        tasks.append(("frame", {"point": point.to_json(), "height": height, "engine": engine}))
        tasks.append(("system", {"point": point.to_json(), "height": height, "pes": pes,
                                 "bandwidth_bytes_per_cycle": bandwidth, "engine": engine}))
    results = run_tasks(tasks, jobs=jobs, progress=progress, desc="simulating systems",
                        points=[2] * len(requests), cluster=cluster)
    return [{**system, "height": spec["height"], "pe": CycleData.from_json(pe)}
            for pe, system, (_, spec) in zip(results[::2], results[1::2], tasks[1::2])]
