"""Pipeline programs on the extended roofline, placed as the roofline places a PE.

A program's design point (:class:`ProgramDesignPoint`) is one job: a configuration of a program
of :data:`hwgen.programs.PROGRAMS` (a built-in one, an installed one or one named as
``module:Name``). One pipeline is one "PE" of the roofline:

- its ops per cycle come from the cycle model (:func:`hwgen.model.predict_program`) with an
  ideal memory (latency 1, unlimited bandwidth), as a PE's frame is measured;
- its computational intensity from the job's memory traffic: the closed form the cycle model
  counts from the job's declared shape, or, for a job that declares none, one simulation of the
  job (its HMM counts ops and bytes at the port), whose cycles then stand for the model's;
- its resources from the estimate of its bare pipeline, and so its scalability SC.

:func:`confirm_program` simulates a point's job to hold the cycle model's figures against the
simulation.
"""

import warnings
from dataclasses import dataclass
from functools import cached_property

from amaranth.hdl import UnusedElaboratable

from ..catalog import resolve_board
from ..errors import HwgenError, ParameterError
from ..kernels.pipeline import Pipeline
from ..model import predict_program
from ..programs import PROGRAMS, program_name
from ..sim import HostModel, MemoryModel, instrument_pipeline, run_threads
from .frame_scaling import FrameFigures
from .model import RooflinePoint, Roofline, _clock, bounding_link, check_clock
from .sweep import Measurement, _engine, run_tasks

__all__ = ["ProgramDesignPoint", "ProgramConfirmation", "build_program_roofline",
           "confirm_program", "measure_programs", "program_points", "simulate_job"]


@dataclass(frozen=True)
class ProgramDesignPoint:
    """One job of a pipeline program, as a design point of the roofline.

    Its pipeline is its own datapath: ``buffer`` says ``own``, ``unroll`` is 1 (one pipeline is
    one PE), and it counts as pipelined.

    Parameters
    ----------
    program : str
        The program's name in :data:`hwgen.programs.PROGRAMS` (``gemm``, ``module:Name``, ...).
    values : tuple of (str, object)
        The job's arguments (:meth:`hwgen.kernels.pipeline.Job.arguments`).
    shown : tuple of str
        Options the label names beside the variant and the threads (those that differ between
        the points of one roofline).
    """
    program: str
    values: tuple
    shown: tuple = ()

    buffer = "own"
    pipeline = True
    unroll = 1
    width = height = None

    @property
    def kernel(self):
        return self.program

    @property
    def threads(self):
        """The job's hardware threads (what colours it on the figure)."""
        return dict(self.values).get("threads", 1)

    def job(self):
        """The job (built anew: a job holds its program)."""
        return PROGRAMS[self.program](**dict(self.values))

    def build(self, height=None):
        """The job's bare pipeline (a PE of the roofline; ``height`` has no meaning here)."""
        return Pipeline(self.job().program)

    @cached_property
    def label(self):
        """``vector L2, 4 threads``: as the job labels itself (built once: a job builds its
        program)."""
        values = dict(self.values)
        extra = [f"{name} {values[name]}" for name in self.shown if name in values]
        return ", ".join([self.job().label(), *extra])

    @property
    def title(self):
        """What the roofline's title says of the program."""
        return PROGRAMS[self.program].name

    @property
    def problem(self):
        """The problem every job of the point solves, in words (its options but the variant,
        threads and those the label shows)."""
        hidden = {"variant", "threads", "seed", *self.shown}
        return ", ".join(f"{name} {value}" for name, value in self.values
                         if name not in hidden) or "the default problem"

    def to_json(self):
        return {"program": self.program, "values": [list(pair) for pair in self.values],
                "shown": list(self.shown)}

    @classmethod
    def from_json(cls, data):
        return cls(data["program"], tuple(tuple(pair) for pair in data["values"]),
                   tuple(data.get("shown", ())))


def program_points(program, jobs):
    """The design points of ``jobs`` (of the program named ``program``), labelled as the jobs
    label themselves, and by the options that differ between them where those labels do not
    tell the points apart."""
    arguments = [job.arguments() for job in jobs]
    names = list(dict.fromkeys(name for values in arguments for name in values))
    labels = [job.label() for job in jobs]
    shown = () if len(set(labels)) == len(labels) else tuple(
        name for name in names if name not in ("variant", "threads")
        and len({repr(values.get(name)) for values in arguments}) > 1)
    return [ProgramDesignPoint(program, tuple(values.items()), shown) for values in arguments]


def simulate_job(job, memory=MemoryModel(), host=HostModel(), *, engine=None):
    """Run ``job`` as ``hwgen run`` does, its HMM attached (which changes no cycle): the
    :class:`hwgen.sim.ThreadRun`."""
    storage, params = job.memory()
    expected = None if job.shape() is None else predict_program(job, memory, host).cycles
    return run_threads(instrument_pipeline(Pipeline(job.program)), storage, params=params,
                       host=host, memory=memory, max_cycles=job.cycle_budget(memory, host),
                       engine=engine, expected_cycles=expected)


def _frame(cycles, ops, bytes_read, bytes_written, simulated=(), saturated=()):
    """A job's figures in the roofline's frame: no image, so no width, height or outputs."""
    return FrameFigures(width=None, height=None, cycles=cycles, outputs=None, ops=ops,
                        bytes_read=bytes_read, bytes_written=bytes_written, scaled=False,
                        simulated_heights=(), simulated_cycles=tuple(simulated),
                        saturated=tuple(saturated))


def measure_programs(points, board, *, host=HostModel(), jobs=1, progress=False, engine=None,
                     cluster=None):
    """Measure every program point on ``board``: a list of
    :class:`hwgen.roofline.sweep.Measurement`, in order.

    The cycle model predicts each job with an ideal memory; a job that declares no shape runs
    once in simulation instead. Resources are each bare pipeline's estimate (cached, once per
    distinct hardware). ``jobs``, ``progress``, ``cluster``: see
    :func:`hwgen.roofline.sweep.run_tasks`; ``engine`` simulates the jobs without a shape.
    """
    board = resolve_board(board)
    engine = _engine(engine)
    memory = MemoryModel()
    built = [point.job() for point in points]
    tasks, per_point = [], []
    for point, job in zip(points, built):
        tasks.append(("program_resources", {"program": program_name(job),
                                            "hardware": job.hardware(),
                                            "board": board.to_json()}))
        if job.shape() is None:
            tasks.append(("program_run", {"program": program_name(job),
                                          "arguments": job.arguments(),
                                          "launch_delay_cycles": host.launch_delay_cycles,
                                          "engine": engine}))
        per_point.append(1 + (job.shape() is None))
    results = iter(run_tasks(tasks, jobs=jobs, progress=progress, points=per_point,
                             desc="estimating pipelines", cluster=cluster))
    measurements = []
    for point, job in zip(points, built):
        found = next(results)
        if job.shape() is None:
            run = next(results)
            frame = _frame(run["cycles"], run["ops"], run["bytes_read"], run["bytes_written"],
                           simulated=(run["cycles"],),
                           saturated=tuple(f"job: {name}" for name in run["saturated"]))
            source = "simulation (the job declares no shape)"
        else:
            p = predict_program(job, memory, host)
            frame = _frame(p.cycles, p.ops, p.bytes_read, p.bytes_written)
            source = "cycle model"
        measurements.append(Measurement(
            point=point, name=f"{job.program.name}_t{job.threads}", frame=frame,
            resources={r: found[r] for r in ("lut", "ff", "bram", "dsp")},
            resources_source=f"estimate; cycles from the {source}",
            resources_unmodelled=found["unmodelled"]))
    return measurements


def build_program_roofline(points, board, *, devices=None, resources="estimate",
                           clock="board", link=None, ceiling_clocks_mhz=None, host=HostModel(),
                           jobs=1, progress=False, engine=None, cluster=None):
    """Place program points on ``board``'s roofline, as
    :func:`hwgen.roofline.model.build_roofline` places PEs.

    Parameters
    ----------
    points : list of ProgramDesignPoint
    board : Board or str
    devices, link, ceiling_clocks_mhz
        As for :func:`~hwgen.roofline.model.build_roofline`.
    resources : str
        ``estimate`` only: a pipeline's resources come from its estimate.
    clock : str or float
        ``board`` or MHz (Fmax is not measured for pipelines).
    host : HostModel
        How the host starts the threads.
    jobs, progress, engine, cluster
        See :func:`measure_programs`.
    """
    board = resolve_board(board)
    if resources != "estimate":
        raise ParameterError("resources", f"of a program's pipeline come from the estimate: "
                                          f"give estimate, not {resources!r}")
    clock = check_clock(clock)
    if clock == "fmax":
        raise ParameterError("clock", "fmax is measured for PEs, not for a program's "
                                      "pipeline: give board or MHz")
    devices = list(range(1, board.device_count + 1)) if devices is None else list(devices)
    if not devices:
        raise ParameterError("devices", "must name at least one device count")
    for count in devices:
        bounding_link(board, count, link)
    if ceiling_clocks_mhz is not None:
        ceiling_clocks_mhz = [float(check_clock(mhz)) for mhz in ceiling_clocks_mhz]
    if not points:
        raise HwgenError("a roofline needs at least one design point")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # jobs built for their figures
        measurements = measure_programs(points, board, host=host, jobs=jobs, progress=progress,
                                        engine=engine, cluster=cluster)
    available = board.resources.as_counts()
    placed = []
    for m in measurements:
        mhz, source = _clock(clock, board, m)
        for count in devices:
            bound, gbps = bounding_link(board, count, link)
            placed.append(RooflinePoint(m, count, available, mhz, source, bound.name, gbps))
    options = {"resources": resources, "clock": clock, "link": link, "devices": devices,
               "ceiling_clocks_mhz": ceiling_clocks_mhz, "pes": None, "engine": engine,
               "launch_delay_cycles": host.launch_delay_cycles}
    return Roofline(kernel=points[0].kernel, board=board, points=tuple(placed), options=options)


@dataclass(frozen=True)
class ProgramConfirmation:
    """A program point's figures from the roofline against one simulation of its job.

    Parameters
    ----------
    label : str
    modelled, simulated : dict
        ``cycles``, ``ops``, ``bytes_read``, ``bytes_written`` of the roofline's figures and of
        the simulation (ideal memory, the same host).
    saturated : tuple of str
        HMM values that saturated in the simulation.
    engine : dict
        The engine that simulated it.
    """
    label: str
    modelled: dict
    simulated: dict
    saturated: tuple
    engine: dict

    def error(self, figure):
        """``(modelled - simulated) / simulated`` of ``figure``, or ``None`` when the
        simulation has none of it."""
        simulated = self.simulated[figure]
        return None if not simulated else (self.modelled[figure] - simulated) / simulated

    def to_json(self):
        return {"label": self.label, "modelled": dict(self.modelled),
                "simulated": dict(self.simulated),
                "errors": {figure: self.error(figure) for figure in self.simulated},
                "saturated": list(self.saturated), "engine": self.engine,
                "memory": MemoryModel().to_json()}


def confirm_program(placed, *, host=HostModel(), engine=None):
    """Simulate the job of a placed program point (a :class:`RooflinePoint`) with the ideal
    memory the roofline assumes, and hold its figures against the roofline's."""
    point, frame = placed.measurement.point, placed.measurement.frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        run = simulate_job(point.job(), MemoryModel(), host, engine=_engine(engine))
    names = ("cycles", "ops", "bytes_read", "bytes_written")
    return ProgramConfirmation(
        label=placed.label, modelled={name: getattr(frame, name) for name in names},
        simulated={name: getattr(run, name) for name in names},
        saturated=tuple(run.saturated), engine=run.engine)
