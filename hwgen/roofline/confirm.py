"""Synthesis confirms the roofline: the system of SC PEs the model counts, built and measured.

The model's SC divides one device by one bare PE's resources; the system that would fill the
device also has its arbiters and response queue (:class:`hwgen.kernels.PESystem`). This
synthesizes that system (with nextpnr's Fmax where the family has place and route) and sets
what it uses against what the model predicted (SC x one PE).
"""

from dataclasses import dataclass

from ..catalog import design_name, resolve_board
from ..errors import HwgenError
from ..resources.synth import synthesize
from .model import RESOURCES

__all__ = ["Confirmation", "confirm_point"]


@dataclass(frozen=True)
class Confirmation:
    """A roofline point's system of SC PEs synthesized: predicted, synthesized and available
    resources (``{"lut", "ff", "bram", "dsp"}``), whether it fits one device and its Fmax."""
    label: str
    name: str
    board: str
    pes: int
    predicted: dict
    synthesized: dict
    available: dict
    fmax_mhz: float | None
    fmax_source: str

    @property
    def fits(self):
        return all(self.synthesized[r] <= self.available[r] for r in RESOURCES)

    @property
    def over(self):
        """Resources the system needs more of than the device has."""
        return [r for r in RESOURCES if self.synthesized[r] > self.available[r]]

    def error(self, resource):
        """(synthesized - predicted) / predicted, ``None`` when nothing was predicted."""
        predicted = self.predicted[resource]
        return (self.synthesized[resource] - predicted) / predicted if predicted else None

    def to_json(self):
        return {"label": self.label, "name": self.name, "board": self.board, "pes": self.pes,
                "predicted": self.predicted, "synthesized": self.synthesized,
                "available": self.available, "fits": self.fits, "over": self.over,
                "error": {r: self.error(r) for r in RESOURCES},
                "fmax_mhz": self.fmax_mhz, "fmax_source": self.fmax_source}


def confirm_point(point, board, *, seeds=3, progress=False):
    """Synthesize the bare system of ``point.sc_pes_per_device`` PEs of a
    :class:`hwgen.roofline.RooflinePoint` on ``board``; place and route it when it fits and the
    family can."""
    board = resolve_board(board)
    design = point.measurement.point
    pes = point.sc_pes_per_device
    system = design.system(pes, design.height)
    name = design_name(design.kernel, system)
    fmax_source = "not measured: no place and route for this family here"
    try:
        result = synthesize(system, board, name=name, seeds=seeds, progress=progress)
        if result.fmax_mhz is not None:
            fmax_source = f"nextpnr, median of {result.seeds} seed(s)"
    except HwgenError as error:
        if "does not fit" not in str(error):
            raise
        result = synthesize(system, board, name=name, fmax=False, require_fit=False,
                            progress=progress)
        fmax_source = "not measured: the system does not fit"
    resources = point.measurement.resources
    return Confirmation(
        label=point.label, name=name, board=board.name, pes=pes,
        predicted={r: pes * resources[r] for r in RESOURCES},
        synthesized=result.resources(), available=board.resources.as_counts(),
        fmax_mhz=result.fmax_mhz, fmax_source=fmax_source)
