"""What ``hwgen run`` found: one job of a program on the multithreaded pipeline."""

from dataclasses import dataclass, field

from ..sim import HostModel, MemoryModel, ThreadRun
from ..versions import tool_versions
from .schema import check_schema, stamp

__all__ = ["RunResult"]

#: What the traces' timestamps count.
TRACE_TIME_UNIT = "clock cycle, counted by the HMM from its start"


@dataclass(frozen=True)
class RunResult:
    """A program's job as the HMM measured it, with the check of its result.

    Parameters
    ----------
    program : str
        The program's name (``gemm``, ``pi``, ...).
    parameters : dict
        The job's parameters.
    memory : MemoryModel
    host : HostModel
    stages : tuple of str
        The pipeline's stages, in order.
    result_matches_numpy_model : bool
    suspect : tuple of str
        Why the figures cannot be trusted as they stand (empty when they can).
    run : ThreadRun
        What the HMM measured (read back from JSON without its readout).
    simulation_seconds : float
        Wall-clock seconds of the run, the compiled engine's compile included.
    trace_files : tuple of str
        The Paraver and Perfetto files written of the run.
    summary : dict
        The job's own figures of its result (:meth:`Job.summary`, e.g. ``{"pi": 3.14...}``),
        written under ``summary`` and as top-level keys.
    measured_on : str
        ``"simulation"`` (``sim``, ``run``), ``"board"`` or ``"simulated board"`` (``hwgen board
        run``, which also names its ``board``).
    board : str or None
        The board a ``board run`` measured on.
    tool_versions : dict
    """
    SCHEMA = "hwgen.run"
    SCHEMA_VERSION = 1

    program: str
    parameters: dict
    memory: MemoryModel
    host: HostModel
    stages: tuple
    result_matches_numpy_model: bool
    suspect: tuple
    run: ThreadRun
    simulation_seconds: float
    trace_files: tuple = ()
    summary: dict = field(default_factory=dict)
    measured_on: str = "simulation"
    board: str | None = None
    tool_versions: dict = field(default_factory=tool_versions)

    def to_json(self):
        """The record as written to ``--json``; keys and units: docs/json.md."""
        obj = {
            "tool_versions": self.tool_versions,
            "program": self.program,
            "parameters": self.parameters,
            "memory": self.memory.to_json(),
            "host": self.host.to_json(),
            "stages": list(self.stages),
            "result_matches_numpy_model": self.result_matches_numpy_model,
            "suspect": list(self.suspect),
            **self.run.to_json(),
            "trace_time_unit": TRACE_TIME_UNIT,
            "trace_files": list(self.trace_files),
            "engine": self.run.engine,
            "simulation_seconds": self.simulation_seconds,
        }
        # The job's own figures at the top level too, where readers of earlier files find "pi".
        obj.update(self.summary)
        obj["summary"] = dict(self.summary)
        obj["measured_on"] = self.measured_on
        if self.board is not None:
            obj["board"] = self.board
        return stamp(self.SCHEMA, self.SCHEMA_VERSION, obj)

    @classmethod
    def from_json(cls, obj):
        """The record :meth:`to_json` wrote (:class:`~.schema.SchemaError` for another schema
        or a newer version)."""
        check_schema(obj, cls.SCHEMA, cls.SCHEMA_VERSION)
        return cls(program=obj["program"], parameters=obj["parameters"],
                   memory=MemoryModel.from_json(obj["memory"]),
                   host=HostModel.from_json(obj["host"]), stages=tuple(obj["stages"]),
                   result_matches_numpy_model=obj["result_matches_numpy_model"],
                   suspect=tuple(obj["suspect"]),
                   run=ThreadRun.from_json(obj, engine=obj["engine"]),
                   simulation_seconds=obj["simulation_seconds"],
                   trace_files=tuple(obj["trace_files"]),
                   summary=dict(obj.get("summary", {})),
                   measured_on=obj.get("measured_on", "simulation"), board=obj.get("board"),
                   tool_versions=obj["tool_versions"])
