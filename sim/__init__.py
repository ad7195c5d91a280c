"""Simulation: memory/I-O models, running PEs in Amaranth's simulator, reading their HMMs like a
host, and the cycle data that comes out."""

from .compiled_simulator import CompiledSimulator
from .cycle_data import CycleData
from .harness import (PERun, WindowRun, check_image, instrument_pe, run_pe, run_pes,
                      run_window_filter)
from .hmm_host import HMMError, HMMHost
from .host import (STATE_NAMES, HostModel, StateTimeline, ThreadRun, instrument_pipeline,
                   run_threads)
from .line_profile import LineActivity, LineProfile, LineProfiler
from .memory import MemoryModel, MemoryServer, PortTraffic
from .readout import HMMReadout
from .reference import window_filter_model
from .step_profile import StepActivity, StepProfile, StepProfiler
from .stimulus import run_cycles
from .trace_records import TraceRecords
from .system import (SystemRun, frame_layout, instrument_system, run_window_system,
                     window_system)

__all__ = [
    "CompiledSimulator", "CycleData", "HMMError", "HMMHost", "HMMReadout", "HostModel", "LineActivity", "LineProfile",
    "LineProfiler", "MemoryModel", "MemoryServer", "PERun", "PortTraffic", "STATE_NAMES",
    "StateTimeline", "StepActivity", "StepProfile", "StepProfiler", "ThreadRun", "TraceRecords", "WindowRun",
    "SystemRun", "check_image", "frame_layout", "instrument_pe", "instrument_pipeline",
    "instrument_system",
    "run_cycles", "run_pe", "run_pes", "run_threads", "run_window_filter", "run_window_system",
    "window_filter_model", "window_system",
]
