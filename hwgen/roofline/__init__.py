"""The extended roofline: design points measured by a sweep (:mod:`.sweep`, with tall frames
scaled exactly from short ones by :mod:`.frame_scaling`), the model that places them under a
board's compute and I/O roofs (:mod:`.model`), and its figure (:mod:`.figure`)."""

from .model import Roofline, RooflinePoint, build_roofline
from .sweep import DesignPoint, Measurement, design_grid, measure

__all__ = ["DesignPoint", "Measurement", "Roofline", "RooflinePoint", "build_roofline",
           "design_grid", "measure", "plot_roofline"]


def __getattr__(name):
    # The figure (matplotlib) is imported where it is drawn, not by every user of the model.
    if name == "plot_roofline":
        from .figure import plot_roofline
        return plot_roofline
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
