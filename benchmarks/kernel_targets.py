"""Measure the window filter against the targets of "A faster and smaller kernel".

Targets:

- Fmax: ``line`` 3x3 dilation on ``ulx3s-85f`` (ECP5-85F, speed grade 6), median of 3 nextpnr
  seeds, for U = 1, 2, 4, 8: >= 125 MHz, stretch >= 180 MHz.
- Area: ``line`` 3x3 dilation for a 1920-wide image with ``synth_xilinx -family xcup``
  (board ``alveo-u280``) at U = 1 and U = 8: LUT + FF <= 50% of Vitis Vision's dilate
  (Vivado HLS, published: 392 LUT + 411 FF, 3 BRAM18 at 1 pixel/clock; 1249 LUT + 657 FF,
  6 BRAM18 at 8 pixels/clock) and block RAM <= 2 / <= 4 BRAM18.

Prints every figure, whether its target is met, and the critical path nextpnr names for U = 8.
Results come from :func:`hwgen.resources.synth.synthesize`, so they are cached: a rerun is instant.

    python benchmarks/kernel_targets.py [--height 512] [--json FILE] [-q]
"""

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from hwgen.catalog import board_tree_policy, design_name, make_window_filter, resolve_board
from hwgen.resources.synth import synthesize
from hwgen.versions import tool_versions

FMAX_TARGET_MHZ, FMAX_STRETCH_MHZ = 125.0, 180.0
# Vitis Vision dilate 3x3, 1920-wide image, Vivado HLS (published resource figures).
VITIS = {1: {"lut": 392, "ff": 411, "bram18": 3, "bram18_target": 2},
         8: {"lut": 1249, "ff": 657, "bram18": 6, "bram18_target": 4}}


def pe(unroll, width, height, board):
    """The line PE as `hwgen synth --board` builds it: the board's register policy."""
    return make_window_filter("dilation", size=(3, 3), mask="rect", pixel_bits=8, width=width,
                              height=height, unroll=unroll, buffer="line", pipeline=True,
                              tree_stages=board_tree_policy(resolve_board(board)), credits=None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fmax-width", type=int, default=512, help="image width of the Fmax designs")
    parser.add_argument("--height", type=int, default=512, help="image height of every design")
    parser.add_argument("--seeds", type=int, default=3, help="nextpnr seeds per Fmax design")
    parser.add_argument("--json", metavar="FILE", default=None, help="write every figure as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    jobs = [("fmax", u, args.fmax_width, "ulx3s-85f") for u in (1, 2, 4, 8)]
    jobs += [("area", u, 1920, "alveo-u280") for u in (1, 8)]
    results = {}
    for kind, unroll, width, board in tqdm(jobs, desc="synthesis", disable=args.quiet):
        design = pe(unroll, width, args.height, board)
        results[kind, unroll] = synthesize(design, board, seeds=args.seeds,
                                           name=design_name("dilation", design))

    report = {"tool_versions": tool_versions(), "fmax": [], "area": []}
    print(f"Fmax: line 3x3 dilation, {args.fmax_width}x{args.height}, ulx3s-85f (LFE5U-85F, speed 6), "
          f"median of {args.seeds} seeds; target >= {FMAX_TARGET_MHZ:g} MHz, stretch >= "
          f"{FMAX_STRETCH_MHZ:g} MHz")
    print(f"  {'U':>2} {'median':>7} {'min':>7} {'max':>7}  {'LUT':>5} {'FF':>5} {'EBR':>3}  target  stretch")
    for unroll in (1, 2, 4, 8):
        r = results["fmax", unroll]
        met = r.fmax_mhz >= FMAX_TARGET_MHZ
        stretch = r.fmax_mhz >= FMAX_STRETCH_MHZ
        print(f"  {unroll:>2} {r.fmax_mhz:7.1f} {r.fmax_min_mhz:7.1f} {r.fmax_max_mhz:7.1f}  "
              f"{r.lut:5} {r.ff:5} {r.bram:3}  {'met' if met else 'MISSED':7} "
              f"{'met' if stretch else 'missed'}")
        report["fmax"].append({"unroll": unroll, "fmax_mhz": r.fmax_mhz, "fmax_min_mhz": r.fmax_min_mhz,
                               "fmax_max_mhz": r.fmax_max_mhz, "fmax_seeds_mhz": list(r.fmax_seeds_mhz),
                               "lut": r.lut, "ff": r.ff, "bram": r.bram, "target_met": met,
                               "stretch_met": stretch, "critical_path": list(r.critical_path)})
    path = results["fmax", 8].critical_path
    print("  critical path at U=8 (median seed): " + (path[0] if path else "none reported"))
    for net in path[1:]:
        print(f"    net {net}")

    print(f"Area: line 3x3 dilation, 1920x{args.height}, synth_xilinx -family xcup (alveo-u280) "
          f"vs Vitis Vision dilate (Vivado HLS); target LUT+FF <= 50% of theirs")
    print(f"  {'U':>2} {'LUT':>5} {'FF':>5} {'LUT+FF':>6} {'50% Vitis':>9} {'share':>6}  "
          f"{'BRAM18':>6} {'limit':>5}  LUT+FF  BRAM")
    for unroll in (1, 8):
        r, v = results["area", unroll], VITIS[unroll]
        total, budget = r.lut + r.ff, (v["lut"] + v["ff"]) / 2
        share = total / (v["lut"] + v["ff"])
        print(f"  {unroll:>2} {r.lut:5} {r.ff:5} {total:6} {budget:9.1f} {share:6.1%}  {r.bram:6} "
              f"{v['bram18_target']:5}  {'met' if total <= budget else 'MISSED':6}  "
              f"{'met' if r.bram <= v['bram18_target'] else 'MISSED'}")
        for workaround in r.workarounds:
            print(f"     workaround: {workaround}")
        report["area"].append({"unroll": unroll, "lut": r.lut, "lut_logic": r.lut_logic,
                               "lutram_luts": r.lutram_luts, "ff": r.ff, "bram18": r.bram,
                               "lut_plus_ff": total, "vitis_lut": v["lut"], "vitis_ff": v["ff"],
                               "vitis_bram18": v["bram18"], "share_of_vitis": share,
                               "lut_ff_met": total <= budget, "bram_met": r.bram <= v["bram18_target"],
                               "workarounds": list(r.workarounds), "cells": r.cells})
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
