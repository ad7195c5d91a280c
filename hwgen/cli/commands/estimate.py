"""``hwgen estimate``: resources of a kernel or a pipeline program on a board in a blink, from the
family's cost table, and its cycles from the cycle model (:mod:`hwgen.model`), without
simulating."""

import json
from pathlib import Path

from ...errors import HwgenError
from ...kernels import PESystem
from ...model import predict_program, predict_window
from ...programs import PROGRAMS
from ...resources.estimate import estimate
from ...sim import HostModel
from ..measured import add_measured_options, measured_design, measured_report
from ..options import add_memory_options, hmm_label, memory_from_args
from ..outputs import write_files
from ..programs import job_from_args

__all__ = ["add_options", "run"]

DESCRIPTION = ("Estimate LUT, FF, block RAM and DSP of a window-filter PE or a pipeline program "
               "as `build` and `run` build it (with its hardware measurement module unless "
               "--no-instrument) on a board by counting its primitives and pricing them with "
               "the family's cost table (characterised once with real synthesis; see "
               "docs/estimate.md), and its cycles per job against the memory model from the "
               "cycle model, without simulating (an expected value under jitter or "
               "backpressure, and for programs; see docs/model.md).")


def add_options(parser):
    add_measured_options(parser, what="the estimate", programs=PROGRAMS, host=True)
    add_memory_options(parser, seeded=None)


def run(args):
    memory = memory_from_args(args)
    if args.kernel in PROGRAMS and args.launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {args.launch_delay}")
    board, pe, design, name = measured_design(args, synthesis=False)
    instrumented = design is not pe
    result = estimate(design, board, name=name)
    report = measured_report(args, pe, design, result)
    if args.kernel in PROGRAMS:
        host = HostModel(launch_delay_cycles=args.launch_delay)
        job = job_from_args(args, args.kernel)
        # A job that declares no shape has no cycle model: its cycles are n/a.
        prediction = None if job.shape() is None else predict_program(job, memory, host)
        report["host"] = {"launch_delay_cycles": host.launch_delay_cycles}
    else:
        # The cycle model predicts one PE from its closed-form traffic; a system's shared port
        # is not modelled.
        unmodelled = isinstance(pe, PESystem) or pe.traffic() is None
        prediction = None if unmodelled else predict_window(pe, memory)
    if args.json:
        report.update(cycles=None, ops_per_cycle=None, bytes_per_cycle=None, prediction=None,
                      memory=memory.to_json())
        if prediction is not None:
            report.update(cycles=prediction.cycles, ops_per_cycle=prediction.ops_per_cycle,
                          bytes_per_cycle=prediction.bytes_per_cycle,
                          prediction=prediction.to_json(board.clock_mhz))
        write_files({Path(args.json): json.dumps(report, indent=2) + "\n"})
    if not args.quiet:
        proxy = f", proxy cost table {result.cost_family}" if result.proxy else ""
        print(f"{name} ({hmm_label(instrumented)}) on {result.board} (estimate{proxy}, "
              f"{result.seconds * 1000:.0f} ms)")
        print(f"  LUT {result.lut}, FF {result.ff}, block RAM {result.bram}, DSP {result.dsp}, "
              f"carry cells {result.carry}")
        for what, count in result.unmodelled.items():
            print(f"  not modelled: {count} x {what}")
        if prediction is None:
            print(f"  cycles n/a ({_unpredicted(args.kernel, pe)})")
        else:
            _print_prediction(prediction, board)
        if args.json:
            print(f"  wrote {args.json}")
    return 0


def _unpredicted(kernel, pe):
    """Why the cycle model predicts nothing for ``pe``."""
    if kernel in PROGRAMS:
        return "the program declares no shape, Job.shape()"
    if isinstance(pe, PESystem):
        return "the cycle model predicts one PE, not a system sharing a port"
    return "the PE states no closed-form traffic, traffic() is None"


def _print_prediction(prediction, board):
    expected = "" if prediction.exact else "expected "
    spin = "" if prediction.spin_share is None else f", spin share {prediction.spin_share:.1%}"
    print(f"  {expected}cycles {prediction.cycles:,.0f} per job (predicted, bound by "
          f"{prediction.bound}), {prediction.ops_per_cycle:.3f} ops/cycle, "
          f"{prediction.bytes_per_cycle:.3f} bytes/cycle, stall share "
          f"{prediction.stall_share:.1%}{spin}, "
          f"{prediction.milliseconds(board.clock_mhz):.3f} ms at {board.clock_mhz:g} MHz")
