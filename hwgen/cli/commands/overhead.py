"""``hwgen overhead``: what the hardware measurement module costs a kernel, from real synthesis."""

import json
from pathlib import Path

from ..measured import add_measured_options, measured_design, measured_parameters
from ...programs import PROGRAMS
from ...records import OverheadRecord
from ..options import add_option, hmm_label
from ..outputs import write_files
from ..report import add_report_option, check_report_option, report_file
from ...resources.overhead import measure_overhead
from .synth import unknown_cells_note

__all__ = ["add_options", "run"]

DESCRIPTION = ("Synthesize a window-filter PE, with --pes a system of PEs, or a pipeline "
               "program's pipeline, bare and with "
               "its hardware measurement module of --probes (as `build` writes it), and print "
               "LUT, FF, block RAM, memory bits and Fmax of both with the overhead in units and "
               "percent.")


def add_options(parser):
    add_measured_options(parser, what="the comparison", instrument=False,
                         quiet="no progress, only the comparison", programs=PROGRAMS)
    add_option(parser, "--seeds", type=int, default=3, metavar="N",
               help="place-and-route seeds for Fmax, median reported")
    add_report_option(parser)


def run(args):
    check_report_option(args)
    board, pe, _, name = measured_design(args, synthesis=True)
    result = measure_overhead(pe, board, seeds=args.seeds, progress=not args.quiet,
                              probes=args.probes)
    what = "program" if args.kernel in PROGRAMS else "kernel"
    report = OverheadRecord(what, args.kernel, name, measured_parameters(args, pe), args.probes,
                            result).to_json()
    files = report_file(args, report, args.json or "this hwgen overhead run")
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    write_files(files)
    bare, with_hmm = hmm_label(False), hmm_label(True)
    print(f"{name} on {board.name}: {bare} and {with_hmm} (probes {args.probes})")
    print(f"  {'':20} {bare:>12} {with_hmm:>13} {'overhead':>22}")
    for label, before, after in result.rows():
        if before is None or after is None:
            print(f"  {label:20} {'-':>12} {'-':>13} {'(no place and route)':>22}")
            continue
        change = after - before
        percent = f"{100 * change / before:+.1f}%" if before else "n/a"
        fmt = (lambda v: f"{v:.1f}") if isinstance(before, float) else (lambda v: f"{v:,}")
        print(f"  {label:20} {fmt(before):>12} {fmt(after):>13} "
              f"{('+' if change >= 0 else '') + fmt(change):>13} {percent:>8}")
    for synthesized in (result.bare, result.with_hmm):
        if synthesized.unknown_cells:
            print(f"  {synthesized.name}: {unknown_cells_note(synthesized)}")
    share = result.device_share()
    print(f"  the HMM takes {100 * share['lut']:.2f}% of the device's LUTs and "
          f"{100 * share['ff']:.2f}% of its FFs ({board.device})")
    for path in files:
        print(f"  wrote {path}")
    return 0
