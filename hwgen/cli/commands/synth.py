"""``hwgen synth``: real synthesis (Yosys) and Fmax (nextpnr) of a kernel on a board."""

import json
from pathlib import Path

from ..measured import add_measured_options, measured_design, synth_record
from ...programs import PROGRAMS
from ..options import add_option, hmm_label
from ..outputs import write_files
from ...resources.synth import DEFAULT_TARGET_MHZ, synthesize

__all__ = ["add_options", "run", "unknown_cells_note"]

DESCRIPTION = ("Synthesize a window-filter PE as `build` writes it, or a pipeline program's "
               "pipeline as `run` simulates it (with its hardware "
               "measurement module unless --no-instrument) with Yosys for a board's family "
               "and report LUT, FF, block RAM, DSP and carry cells; on ECP5 and iCE40 also "
               "place and route it out of context with nextpnr and report Fmax over several "
               "seeds. Results are cached.")


def add_options(parser):
    add_measured_options(parser, what="the result", quiet="no progress and no summary",
                         programs=PROGRAMS)
    add_option(parser, "--seeds", type=int, default=3, metavar="N",
               help="place-and-route seeds; Fmax is their median")
    add_option(parser, "--target-mhz", type=float, default=None, metavar="MHZ",
               help="nextpnr's target frequency",
               shown="the family's: " + ", ".join(f"{f} {v:g}"
                                                  for f, v in DEFAULT_TARGET_MHZ.items()))
    add_option(parser, "--no-fmax", dest="fmax", action="store_false",
               help="synthesize only, without place and route",
               shown="Fmax measured where nextpnr supports the family")
    add_option(parser, "--no-cache", dest="cache", action="store_false",
               help="run the tools even if a cached result exists", shown="the cache is used")


def run(args):
    board, pe, design, name = measured_design(args, synthesis=True)
    result = synthesize(design, board, name=name, seeds=args.seeds, target_mhz=args.target_mhz,
                        fmax=args.fmax, use_cache=args.cache, progress=not args.quiet)
    if args.json:
        record = synth_record(args, pe, design, result)
        write_files({Path(args.json): json.dumps(record.to_json(), indent=2) + "\n"})
    if not args.quiet:
        print(summary(result, hmm_label(design is not pe)))
        if args.json:
            print(f"  wrote {args.json}")
    return 0


def unknown_cells_note(result):
    """What a synthesis result's figures leave out, in one line."""
    return ("NOT COUNTED, cell types hwgen does not know: "
            + ", ".join(f"{n} x {cell}" for cell, n in result.unknown_cells.items()))


def summary(result, measured):
    lines = [f"{result.name} ({measured}) on {result.board} ({result.command.split()[0]})"
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
