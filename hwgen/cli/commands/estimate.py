"""``hwgen estimate``: resources of a kernel on a board in a blink, from the family's cost table,
and its cycles per frame from the cycle model (:mod:`hwgen.model`), without simulating."""

import json
from pathlib import Path

from ...model import predict_window
from ...resources.estimate import estimate
from ..measured import add_measured_options, measured_design, measured_report
from ..options import add_memory_options, hmm_label, memory_from_args
from ..outputs import write_files

__all__ = ["add_options", "run"]

NAME = "estimate"
HELP = "estimate a kernel's resources and cycles without synthesis or simulation"
DESCRIPTION = ("Estimate LUT, FF, block RAM and DSP of a window-filter PE as `build` writes "
               "it (with its hardware measurement module unless --no-instrument) on a board "
               "by counting its primitives and pricing them with the family's cost table "
               "(characterised once with real synthesis; see docs/estimate.md), and its cycles "
               "per frame against the memory model from the cycle model, without simulating "
               "(an expected value under jitter or backpressure; see docs/model.md).")


def add_options(parser):
    add_measured_options(parser, what="the estimate")
    add_memory_options(parser, seeded=None)


def run(args):
    memory = memory_from_args(args)
    board, pe, design, name = measured_design(args, synthesis=False)
    result = estimate(design, board, name=name)
    prediction = predict_window(pe, memory)
    if args.json:
        report = measured_report(args, pe, design, result)
        report.update(cycles=prediction.cycles, ops_per_cycle=prediction.ops_per_cycle,
                      bytes_per_cycle=prediction.bytes_per_cycle, memory=memory.to_json(),
                      prediction=prediction.to_json(board.clock_mhz))
        write_files({Path(args.json): json.dumps(report, indent=2) + "\n"})
    if not args.quiet:
        proxy = f", proxy cost table {result.cost_family}" if result.proxy else ""
        print(f"{name} ({hmm_label(design is not pe)}) on {result.board} (estimate{proxy}, "
              f"{result.seconds * 1000:.0f} ms)")
        print(f"  LUT {result.lut}, FF {result.ff}, block RAM {result.bram}, DSP {result.dsp}, "
              f"carry cells {result.carry}")
        for what, count in result.unmodelled.items():
            print(f"  not modelled: {count} x {what}")
        expected = "" if prediction.exact else "expected "
        print(f"  {expected}cycles {prediction.cycles:,.0f} per frame (predicted, bound by "
              f"{prediction.bound}), {prediction.ops_per_cycle:.3f} ops/cycle, "
              f"{prediction.bytes_per_cycle:.3f} bytes/cycle, stall share "
              f"{prediction.stall_share:.1%}, {prediction.milliseconds(board.clock_mhz):.3f} ms "
              f"at {board.clock_mhz:g} MHz")
        if args.json:
            print(f"  wrote {args.json}")
    return 0
