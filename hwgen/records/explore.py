"""What ``hwgen explore --fast`` found: every design point predicted, the Pareto front of
performance against LUTs, the best point per area budget, and the front re-measured."""

from dataclasses import dataclass, field

from ..sim import MemoryModel
from ..versions import tool_versions
from .schema import check_schema, stamp

__all__ = ["ExploreResult"]


@dataclass(frozen=True)
class ExploreResult:
    """A fast exploration of a kernel's grid or a program's configurations.

    Parameters
    ----------
    what : str
        ``"kernel"`` or ``"program"``.
    name : str
        The kernel's or program's name.
    title : str
        What was explored, in one line (board, image or problem).
    board : str
    device_lut : int
        LUTs of one device of the board, the whole of the area budgets.
    memory : MemoryModel
        The memory model the points were predicted (and re-measured) against.
    points : tuple of dict
        Every point as ``pareto.csv`` has it (``label``, resources, ``cycles``,
        ``ops_per_cycle``, ``bytes_per_cycle``, ``bound``, ``clock_mhz``, ``gops``, ...,
        ``on_front``).
    budgets : tuple of dict
        The best point per area budget: ``share_percent`` of the device's LUTs, ``lut``, and
        ``label`` and ``gops`` of the fastest point within it (``None``: none fits).
    predict_seconds : float
        Wall-clock seconds the prediction took.
    remeasured : tuple of Remeasured or None
        The front points re-measured by simulation (and synthesis); ``None``: not re-measured.
    tool_versions : dict
    """
    SCHEMA = "hwgen.explore"
    SCHEMA_VERSION = 1

    what: str
    name: str
    title: str
    board: str
    device_lut: int
    memory: MemoryModel
    points: tuple
    budgets: tuple
    predict_seconds: float
    remeasured: tuple | None = None
    tool_versions: dict = field(default_factory=tool_versions)

    @property
    def front(self):
        """The Pareto front's points, by LUTs."""
        return sorted((p for p in self.points if p["on_front"]),
                      key=lambda p: (p["lut"], -p["gops"]))

    def to_json(self):
        """The record as ``explore --fast`` writes it to ``explore.json``; keys and units:
        docs/json.md."""
        remeasured = None if self.remeasured is None else [
            {"label": r.label, "predicted_cycles": r.predicted_cycles,
             "simulated_cycles": r.simulated_cycles, "cycle_error_percent": 100 * r.cycle_error,
             "estimated_lut": r.estimated_lut, "synthesized_lut": r.synthesized_lut,
             "lut_error_percent": None if r.lut_error is None else 100 * r.lut_error}
            for r in self.remeasured]
        return stamp(self.SCHEMA, self.SCHEMA_VERSION, {
            "tool_versions": self.tool_versions, self.what: self.name, "title": self.title,
            "board": self.board, "device_lut": self.device_lut,
            "memory": self.memory.to_json(), "predict_seconds": self.predict_seconds,
            "points": list(self.points), "budgets": list(self.budgets),
            "remeasured": remeasured})

    @classmethod
    def from_json(cls, obj):
        from ..roofline.fast import Remeasured   # the sweep's code, only to read its record

        check_schema(obj, cls.SCHEMA, cls.SCHEMA_VERSION)
        what = "program" if "program" in obj else "kernel"
        remeasured = None if obj["remeasured"] is None else tuple(
            Remeasured(r["label"], r["predicted_cycles"], r["simulated_cycles"],
                       r["estimated_lut"], r["synthesized_lut"]) for r in obj["remeasured"])
        return cls(what=what, name=obj[what], title=obj["title"], board=obj["board"],
                   device_lut=obj["device_lut"], memory=MemoryModel.from_json(obj["memory"]),
                   points=tuple(obj["points"]), budgets=tuple(obj["budgets"]),
                   predict_seconds=obj["predict_seconds"], remeasured=remeasured,
                   tool_versions=obj["tool_versions"])
