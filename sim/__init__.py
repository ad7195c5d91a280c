"""Simulation: memory/I-O models, running PEs in Amaranth's simulator, reading back results."""

from .harness import PERun, RunFigures, WindowRun, check_image, run_pe, run_window_filter
from .memory import MemoryModel, MemoryServer, PortTraffic

__all__ = [
    "MemoryModel", "MemoryServer", "PERun", "PortTraffic", "RunFigures", "WindowRun",
    "check_image", "run_pe", "run_window_filter",
]
