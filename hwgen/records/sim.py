"""What ``hwgen sim`` found: one window-filter PE, or a system of them, against its models."""

from dataclasses import dataclass, field, fields

from ..kernels import WindowTraffic
from ..sim import CycleData, MemoryModel
from ..versions import tool_versions
from .run import TRACE_TIME_UNIT
from .schema import check_schema, stamp

__all__ = ["SimResult"]


@dataclass(frozen=True)
class SimResult:
    """The figures of a simulated window filter and the checks of them.

    Parameters
    ----------
    kernel : str
        The kernel's name (``dilation``, ...).
    title : str or None
        The design in one line, as reports head it.
    measured_on : str
        ``"simulation"`` (``sim``, ``run``), ``"board"`` or ``"simulated board"`` (``hwgen board
        run``, which also names its ``board``).
    board : str or None
        The board a ``board run`` measured on.
    parameters : dict
        The PE's parameters (``WindowFilter.parameters()``).
    memory : MemoryModel
        The memory model it ran against.
    input : str
        The input image's file, or how the random one was made.
    figures : CycleData
        PE 0's figures (the system's at its port when no PE was measured).
    fetch_model : WindowTraffic or None
        The closed-form traffic of one frame (``None``: the PE states none).
    fetch_model_matches : bool or None
        Every PE's traffic equals the fetch model's (``None``: not checked, as the PE states
        no fetch model or a saturated byte count cannot refute it).
    result_matches_numpy_model : bool
        Every output image equals the numpy model's.
    suspect : tuple of str
        Why the figures cannot be trusted as they stand (empty when they can).
    engine : dict
        The engine that ran it (``{"name": "pysim"}`` or the compiled engine's build).
    simulation_seconds : float
        Wall-clock seconds of the run, the compiled engine's compile included.
    link : str or None
        The board link whose bandwidth the memory model has (``--board``).
    system : dict or None
        A system run's figures (:meth:`hwgen.sim.SystemRun.to_json`).
    trace_files : tuple of str or None
        The Paraver and Perfetto files of a traced run (``None``: not traced); its JSON's
        ``timeline`` says what the HMM's timeline recorded.
    tool_versions : dict
        Of hwgen and the tools, when the run was made.
    """
    SCHEMA = "hwgen.sim"
    SCHEMA_VERSION = 1

    kernel: str
    parameters: dict
    memory: MemoryModel
    input: str
    figures: CycleData
    fetch_model: WindowTraffic | None
    fetch_model_matches: bool | None
    result_matches_numpy_model: bool
    suspect: tuple
    engine: dict
    simulation_seconds: float
    link: str | None = None
    system: dict | None = None
    trace_files: tuple | None = None
    title: str | None = None
    measured_on: str = "simulation"
    board: str | None = None
    tool_versions: dict = field(default_factory=tool_versions)

    @property
    def cycles_outside_job(self):
        """Cycles the HMM observed around the job (``None`` without an HMM)."""
        total = self.figures.total_cycles
        return None if total is None else total - self.figures.cycles

    @property
    def timeline(self):
        """What the HMM's timeline of a traced run recorded (``None`` untraced)."""
        if self.trace_files is None:
            return None
        hmm = self.figures.hmm
        return {"records": len(hmm.traces["timeline"]),
                "records_dropped": hmm["timeline.dropped"], "time_unit": TRACE_TIME_UNIT,
                "files": sorted(self.trace_files)}

    def to_json(self):
        """The record as written to ``--json``; keys and units: docs/json.md."""
        obj = {
            "tool_versions": self.tool_versions,
            "kernel": self.kernel,
            "title": self.title,
            "parameters": self.parameters,
            "memory": self.memory.to_json(),
            "link": self.link,
            "input": self.input,
            **self.figures.to_json(),
            "fetch_model": None if self.fetch_model is None else self.fetch_model.to_json(),
            "fetch_model_matches": self.fetch_model_matches,
            "result_matches_numpy_model": self.result_matches_numpy_model,
            "engine": self.engine,
            "suspect": list(self.suspect),
            "simulation_seconds": self.simulation_seconds,
        }
        if self.cycles_outside_job is not None:
            obj["cycles_outside_job"] = self.cycles_outside_job
        if self.system is not None:
            obj["system"] = self.system
        if self.timeline is not None:
            obj["timeline"] = self.timeline
        obj["measured_on"] = self.measured_on
        if self.board is not None:
            obj["board"] = self.board
        return stamp(self.SCHEMA, self.SCHEMA_VERSION, obj)

    @classmethod
    def from_json(cls, obj):
        """The record :meth:`to_json` wrote (:class:`~.schema.SchemaError` for another schema
        or a newer version)."""
        check_schema(obj, cls.SCHEMA, cls.SCHEMA_VERSION)
        model = obj["fetch_model"]
        traffic = None if model is None else WindowTraffic(
            **{f.name: model[f.name] for f in fields(WindowTraffic)})
        return cls(kernel=obj["kernel"], title=obj.get("title"), parameters=obj["parameters"],
                   memory=MemoryModel.from_json(obj["memory"]), input=obj["input"],
                   figures=CycleData.from_json(obj), fetch_model=traffic,
                   fetch_model_matches=obj["fetch_model_matches"],
                   result_matches_numpy_model=obj["result_matches_numpy_model"],
                   suspect=tuple(obj["suspect"]), engine=obj["engine"],
                   simulation_seconds=obj["simulation_seconds"], link=obj["link"],
                   system=obj.get("system"),
                   trace_files=(tuple(obj["timeline"]["files"]) if "timeline" in obj
                                else None),
                   measured_on=obj.get("measured_on", "simulation"), board=obj.get("board"),
                   tool_versions=obj["tool_versions"])
