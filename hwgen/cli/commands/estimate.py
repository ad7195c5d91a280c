"""``hwgen estimate``: resources of a kernel on a board in a blink, from the family's cost table."""

import argparse
import json
from pathlib import Path

from ...resources.estimate import estimate
from ...catalog import design_name, resolve_board
from ..options import add_kernel_options, window_filter_from_args
from ...versions import tool_versions
from .synth import add_board_option, check_json_path

__all__ = ["register"]


def register(subparsers):
    parser = subparsers.add_parser(
        "estimate", help="estimate a kernel's resources without synthesis",
        description="Estimate LUT, FF, block RAM and DSP of a window-filter PE on a board by "
                    "counting its primitives and pricing them with the family's cost table "
                    "(characterised once with real synthesis; see docs/estimate.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_kernel_options(parser)
    add_board_option(parser)
    parser.add_argument("--json", metavar="FILE", default=None, help="write the estimate as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    parser.set_defaults(func=run)


def run(args):
    check_json_path(args.json)
    board = resolve_board(args.board)
    pe = window_filter_from_args(args, board=board)
    name = design_name(args.kernel, pe)
    result = estimate(pe, board, name=name)
    if args.json:
        report = {"tool_versions": tool_versions(), "kernel": args.kernel,
                  "parameters": pe.parameters(), **result.to_json()}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if not args.quiet:
        proxy = f", proxy cost table {result.cost_family}" if result.proxy else ""
        print(f"{name} on {result.board} (estimate{proxy}, {result.seconds * 1000:.0f} ms)")
        print(f"  LUT {result.lut}, FF {result.ff}, block RAM {result.bram}, DSP {result.dsp}, "
              f"carry cells {result.carry}")
        for what, count in result.unmodelled.items():
            print(f"  not modelled: {count} x {what}")
    return 0
