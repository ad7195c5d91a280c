"""The trace-export options of the commands that simulate (``--paraver``, ``--perfetto``,
``--clock-mhz``) and the files they ask for."""

import json
import math
from pathlib import Path

from ..errors import HwgenError
from .options import add_option, add_output_option
from .outputs import check_file_option, check_folder_option
from ..traces.paraver import paraver_files
from ..traces.perfetto import perfetto_trace

__all__ = ["add_trace_options", "add_drain_option", "check_trace_options", "trace_files",
           "DEFAULT_CLOCK_MHZ"]

#: The clock that turns cycles into the microseconds of a Perfetto trace unless told otherwise.
DEFAULT_CLOCK_MHZ = 100.0


def add_trace_options(parser):
    group = parser.add_argument_group(
        "trace export", "traces of what the hardware measurement module recorded over time; "
                        "time is counted in clock cycles from the HMM's start")
    add_output_option(group, "--paraver", "DIR",
                      "a Paraver trace (NAME.prv, .pcf, .row, and NAME.readme.txt on its time unit, drops "
                      "and tools) into DIR; Paraver shows cycles as ns")
    add_output_option(group, "--perfetto", "FILE",
                      "a Chrome/Perfetto JSON trace for ui.perfetto.dev or chrome://tracing",
                      ".perfetto.json")
    add_option(group, "--clock-mhz", type=float, default=DEFAULT_CLOCK_MHZ, metavar="MHZ",
               help="clock that turns cycles into the microseconds of the Perfetto trace")
    return group


def add_drain_option(group, *, default, what, running):
    """``--drain-interval``: how often the host drains ``what`` while ``running``."""
    add_option(group, "--drain-interval", type=int, default=default, metavar="CYCLES",
               help=f"cycles the host waits between drains of {what} while {running}; 0: read "
                    f"it only at the end, so records that do not fit are dropped")


def check_trace_options(args):
    """Validate the trace options before anything runs; True when a trace is asked for."""
    check_folder_option("--paraver", args.paraver)
    check_file_option("--perfetto", args.perfetto)
    if not (math.isfinite(args.clock_mhz) and args.clock_mhz > 0):
        raise HwgenError(f"--clock-mhz must be a positive number, not {args.clock_mhz:g}")
    return args.paraver is not None or args.perfetto is not None


def trace_files(args, timeline, stem):
    """``{path: text}`` of the traces the options ask for; Paraver's files are ``<stem>.*``."""
    files = {}
    if args.paraver is not None:
        for suffix, text in paraver_files(timeline, stem=stem, clock_mhz=args.clock_mhz).items():
            files[Path(args.paraver) / f"{stem}{suffix}"] = text
    if args.perfetto is not None:
        trace = perfetto_trace(timeline, clock_mhz=args.clock_mhz)
        files[Path(args.perfetto)] = json.dumps(trace) + "\n"
    return files
