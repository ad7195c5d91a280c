"""Simulation: memory/I-O models, running PEs in Amaranth's simulator, reading back results."""

from .harness import PERun, RunFigures, WindowRun, check_image, run_pe, run_window_filter
from .host import STATE_NAMES, HostModel, StateTimeline, ThreadRun, run_threads
from .memory import MemoryModel, MemoryServer, PortTraffic

__all__ = [
    "HostModel", "MemoryModel", "MemoryServer", "PERun", "PortTraffic", "RunFigures",
    "STATE_NAMES", "StateTimeline", "ThreadRun", "WindowRun", "check_image", "run_pe",
    "run_threads", "run_window_filter",
]
