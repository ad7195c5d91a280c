"""``hwgen overhead``: what the hardware measurement module costs a kernel, from real synthesis."""

import json
from pathlib import Path

from ...catalog import design_name, resolve_board

from ..options import add_kernel_options, window_filter_from_args
from ...resources.overhead import measure_overhead
from ...resources.synth import synth_command
from .synth import add_board_option, check_json_path, unknown_cells_note

__all__ = ["register"]


def register(subparsers):
    parser = subparsers.add_parser(
        "overhead", help="synthesize a kernel with and without its HMM and compare",
        description="Synthesize a window-filter PE bare and with the default hardware measurement "
                    "module, and print LUT, FF, block RAM, memory bits and Fmax of both with the "
                    "overhead in units and percent.")
    add_kernel_options(parser)
    add_board_option(parser)
    parser.add_argument("--seeds", type=int, default=3, metavar="N",
                        help="place-and-route seeds for Fmax, median reported (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", default=None, help="write the comparison as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args):
    check_json_path(args.json)
    board = resolve_board(args.board)
    synth_command(board)   # a board without an open flow fails before anything is built
    pe = window_filter_from_args(args, board=board)
    result = measure_overhead(pe, board, seeds=args.seeds, progress=not args.quiet)
    if args.json:
        report = {"kernel": args.kernel, "design": design_name(args.kernel, pe),
                  "parameters": pe.parameters(), **result.to_json()}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(f"{design_name(args.kernel, pe)} on {board.name}: without and with the HMM")
    print(f"  {'':20} {'original':>12} {'instrumented':>13} {'overhead':>22}")
    for label, before, after in result.rows():
        if before is None or after is None:
            print(f"  {label:20} {'-':>12} {'-':>13} {'(no place and route)':>22}")
            continue
        change = after - before
        percent = f"{100 * change / before:+.1f}%" if before else "n/a"
        fmt = (lambda v: f"{v:.1f}") if isinstance(before, float) else (lambda v: f"{v:,}")
        print(f"  {label:20} {fmt(before):>12} {fmt(after):>13} "
              f"{('+' if change >= 0 else '') + fmt(change):>13} {percent:>8}")
    for synthesized in (result.original, result.instrumented):
        if synthesized.unknown_cells:
            print(f"  {synthesized.name}: {unknown_cells_note(synthesized)}")
    share = result.device_share()
    print(f"  the HMM takes {100 * share['lut']:.2f}% of the device's LUTs and "
          f"{100 * share['ff']:.2f}% of its FFs ({board.device})")
    return 0
