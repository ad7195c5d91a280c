"""``hwgen estimate``: resources of a kernel on a board in a blink, from the family's cost table."""

import json
from pathlib import Path

from ...resources.estimate import estimate
from ..measured import add_measured_options, measured_design, measured_report
from ..options import hmm_label
from ..outputs import write_files

__all__ = ["add_options", "run"]

NAME = "estimate"
HELP = "estimate a kernel's resources without synthesis"
DESCRIPTION = ("Estimate LUT, FF, block RAM and DSP of a window-filter PE as `build` writes "
               "it (with its hardware measurement module unless --no-instrument) on a board "
               "by counting its primitives and pricing them with the family's cost table "
               "(characterised once with real synthesis; see docs/estimate.md).")


def add_options(parser):
    add_measured_options(parser, what="the estimate")


def run(args):
    board, pe, design, name = measured_design(args, synthesis=False)
    result = estimate(design, board, name=name)
    if args.json:
        write_files({Path(args.json): json.dumps(measured_report(args, pe, design, result),
                                                 indent=2) + "\n"})
    if not args.quiet:
        proxy = f", proxy cost table {result.cost_family}" if result.proxy else ""
        print(f"{name} ({hmm_label(design is not pe)}) on {result.board} (estimate{proxy}, "
              f"{result.seconds * 1000:.0f} ms)")
        print(f"  LUT {result.lut}, FF {result.ff}, block RAM {result.bram}, DSP {result.dsp}, "
              f"carry cells {result.carry}")
        for what, count in result.unmodelled.items():
            print(f"  not modelled: {count} x {what}")
        if args.json:
            print(f"  wrote {args.json}")
    return 0
