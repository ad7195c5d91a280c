"""``hwgen synth``: real synthesis (Yosys) and Fmax (nextpnr) of a kernel on a board."""

import argparse
import json
from pathlib import Path

from ...errors import HwgenError
from ...catalog import design_name, resolve_board
from ..options import add_kernel_options, window_filter_from_args
from ...resources.synth import DEFAULT_TARGET_MHZ, synth_command, synthesize
from ...versions import tool_versions

__all__ = ["register", "add_board_option", "check_json_path", "unknown_cells_note"]


def add_board_option(parser):
    parser.add_argument("--board", default="ulx3s-85f", metavar="B",
                        help="a built-in board (see `hwgen list`) or a .toml/.json board file "
                             "(default: %(default)s)")


def check_json_path(path):
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise HwgenError(f"--json: folder of {path!r} does not exist")


def register(subparsers):
    parser = subparsers.add_parser(
        "synth", help="synthesize a kernel and measure its resources and Fmax",
        description="Synthesize a window-filter PE with Yosys for a board's family and report LUT, "
                    "FF, block RAM, DSP and carry cells; on ECP5 and iCE40 also place and route it "
                    "out of context with nextpnr and report Fmax over several seeds. Results are "
                    "cached.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_kernel_options(parser)
    add_board_option(parser)
    parser.add_argument("--seeds", type=int, default=3, metavar="N",
                        help="place-and-route seeds; Fmax is their median (default: %(default)s)")
    parser.add_argument("--target-mhz", type=float, default=None, metavar="MHZ",
                        help="nextpnr's target frequency; None takes the family's: "
                             + ", ".join(f"{f} {v:g}" for f, v in DEFAULT_TARGET_MHZ.items())
                             + " (default: %(default)s)")
    parser.add_argument("--no-fmax", dest="fmax", action="store_false",
                        help="synthesize only, without place and route (Fmax measured where "
                             "nextpnr supports the family: %(default)s)")
    parser.add_argument("--json", metavar="FILE", default=None, help="write the result as JSON")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="run the tools even if a cached result exists (cache used: %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar and no summary")
    parser.set_defaults(func=run)


def run(args):
    check_json_path(args.json)
    board = resolve_board(args.board)
    synth_command(board)   # a board without an open flow fails before anything is built
    pe = window_filter_from_args(args, board=board)
    name = design_name(args.kernel, pe)
    result = synthesize(pe, board, name=name, seeds=args.seeds, target_mhz=args.target_mhz,
                        fmax=args.fmax, use_cache=args.cache, progress=not args.quiet)
    if args.json:
        report = {"tool_versions": tool_versions(), "kernel": args.kernel,
                  "parameters": pe.parameters(), **result.to_json()}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if not args.quiet:
        print(summary(result))
    return 0


def unknown_cells_note(result):
    """What a synthesis result's figures leave out, in one line."""
    return ("NOT COUNTED, cell types hwgen does not know: "
            + ", ".join(f"{n} x {cell}" for cell, n in result.unknown_cells.items()))


def summary(result):
    lines = [f"{result.name} on {result.board} ({result.command.split()[0]})"
             + (" [cached]" if result.cached else f" in {result.synth_seconds + result.pnr_seconds:.1f} s"),
             f"  LUT {result.lut} (logic {result.lut_logic}, RAM/shift {result.lutram_luts}), "
             f"FF {result.ff}, block RAM {result.bram}, DSP {result.dsp}, carry cells {result.carry}"]
    for workaround in result.workarounds:
        lines.append(f"  workaround {workaround}")
    if result.unknown_cells:
        lines.append(f"  {unknown_cells_note(result)}")
    if result.fmax_mhz is not None:
        seeds = ", ".join(f"{f:.1f}" for f in result.fmax_seeds_mhz if f is not None)
        lines.append(f"  Fmax {result.fmax_mhz:.1f} MHz median of {result.seeds} seeds "
                     f"(min {result.fmax_min_mhz:.1f}, max {result.fmax_max_mhz:.1f}; {seeds}), "
                     f"target {result.target_mhz:g} MHz")
        if result.critical_path:
            lines.append(f"  critical path: {result.critical_path[0]}")
    else:
        lines.append("  Fmax: not measured (no place and route for this family here, or --no-fmax)")
    return "\n".join(lines)
