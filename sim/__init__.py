"""Simulation: memory/I-O models, running PEs in Amaranth's simulator, reading their HMMs like a
host, and the cycle data that comes out."""

from .cycle_data import CycleData
from .harness import PERun, WindowRun, check_image, instrument_pe, run_pe, run_window_filter
from .hmm_host import HMMError, HMMHost
from .host import (STATE_NAMES, HostModel, StateTimeline, ThreadRun, instrument_pipeline,
                   run_threads)
from .memory import MemoryModel, MemoryServer, PortTraffic
from .readout import HMMReadout
from .stimulus import run_cycles

__all__ = [
    "CycleData", "HMMError", "HMMHost", "HMMReadout", "HostModel", "MemoryModel", "MemoryServer",
    "PERun", "PortTraffic", "STATE_NAMES", "StateTimeline", "ThreadRun", "WindowRun",
    "check_image", "instrument_pe", "instrument_pipeline", "run_cycles", "run_pe", "run_threads", "run_window_filter",
]
