"""How wrong and how fast the estimator is, against real synthesis.

Design space: 3x3 and 5x5 dilation, 512x512 image, U in {1, 2, 4, 8, 16, 32} x buffer
{none, smart, line}, on the boards given (default ``ulx3s-85f`` for ECP5 and ``arty-a7-100t``
for Xilinx 7-series). For every resource it prints the mean and the largest absolute error, in
percent of the synthesized figure and in units, the block-RAM exact-match count, and the speed
ratio (Yosys synthesis time over estimate time, elaboration included). Synthesis results are
cached (``hwgen.resources.synth``), so a rerun only re-times the estimates.

    python benchmarks/estimate_accuracy.py [--boards ulx3s-85f arty-a7-100t] [--jobs 2]
        [--json FILE] [--markdown] [-q]
"""

import argparse
import itertools
import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

from hwgen.boards import get_board
from hwgen.catalog import board_tree_policy, design_name, make_window_filter
from hwgen.resources.estimate import estimate
from hwgen.resources.synth import synthesize
from hwgen.versions import tool_versions

UNROLLS = (1, 2, 4, 8, 16, 32)
BUFFERS = ("none", "smart", "line")
SIZES = (3, 5)
RESOURCES = ("lut", "ff", "bram", "dsp")


def design(unroll, buffer, size, board):
    """A point of the design space, as `hwgen synth --board` builds it for ``board``."""
    return make_window_filter("dilation", size=(size, size), mask="rect", pixel_bits=8, width=512,
                              height=512, unroll=unroll, buffer=buffer, pipeline=True,
                              tree_stages=board_tree_policy(get_board(board)), credits=None)


def synthesized(point):
    board, unroll, buffer, size = point
    pe = design(unroll, buffer, size, board)
    result = synthesize(pe, board, name=design_name("dilation", pe), fmax=False)
    return result.resources(), result.synth_seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="+", default=["ulx3s-85f", "arty-a7-100t"],
                        help="boards to compare on (one per family)")
    parser.add_argument("--jobs", type=int, default=2, help="syntheses run at once")
    parser.add_argument("--json", metavar="FILE", default=None, help="write every point as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the summary as a Markdown table")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    points = [(get_board(b).name, u, buf, n)
              for b, n, buf, u in itertools.product(args.boards, SIZES, BUFFERS, UNROLLS)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        synth = dict(zip(points, tqdm(pool.map(synthesized, points), total=len(points),
                                      desc="synthesis", disable=args.quiet)))
    rows = []
    for point in tqdm(points, desc="estimates", disable=args.quiet):
        board, unroll, buffer, size = point
        est = estimate(design(unroll, buffer, size, board), board)
        real, synth_seconds = synth[point]
        rows.append({"board": board, "unroll": unroll, "buffer": buffer, "size": f"{size}x{size}",
                     "synthesis": real, "estimate": est.resources(),
                     "synthesis_seconds": synth_seconds, "estimate_seconds": est.seconds})

    summary = []
    for board in dict.fromkeys(p[0] for p in points):
        mine = [r for r in rows if r["board"] == board]
        for resource in RESOURCES:
            errors = [abs(r["estimate"][resource] - r["synthesis"][resource]) for r in mine]
            percents = [100 * e / r["synthesis"][resource] for e, r in zip(errors, mine)
                        if r["synthesis"][resource]]
            exact = sum(e == 0 for e in errors)
            summary.append({
                "board": board, "family": get_board(board).toolchain.cost_family,
                "resource": resource, "points": len(mine),
                "mean_abs_error_pct": statistics.mean(percents) if percents else 0.0,
                "max_abs_error_pct": max(percents) if percents else 0.0,
                "mean_abs_error": statistics.mean(errors), "max_abs_error": max(errors),
                "exact": exact})
        synth_time = statistics.mean(r["synthesis_seconds"] for r in mine)
        est_time = statistics.mean(r["estimate_seconds"] for r in mine)
        summary.append({"board": board, "resource": "time",
                        "synthesis_seconds_mean": synth_time, "estimate_seconds_mean": est_time,
                        "estimate_seconds_max": max(r["estimate_seconds"] for r in mine),
                        "speed_ratio": synth_time / est_time})

    print_summary(summary, args.markdown)
    if args.json:
        Path(args.json).write_text(json.dumps({"tool_versions": tool_versions(), "points": rows,
                                               "summary": summary}, indent=2) + "\n")
    return 0


def print_summary(summary, markdown):
    if markdown:
        print("| board (cost table) | resource | mean abs error | max abs error | "
              "mean abs error (units) | max abs error (units) | exact |")
        print("|---|---|---|---|---|---|---|")
    for s in summary:
        if s["resource"] == "time":
            line = (f"synthesis {s['synthesis_seconds_mean']:.2f} s mean, estimate "
                    f"{s['estimate_seconds_mean'] * 1000:.0f} ms mean "
                    f"({s['estimate_seconds_max'] * 1000:.0f} ms max): "
                    f"{s['speed_ratio']:.0f}x faster")
            print(f"| {s['board']} | speed | {line} ||||" if markdown else f"  {s['board']}: {line}")
            continue
        if markdown:
            print(f"| {s['board']} ({s['family']}) | {s['resource']} | {s['mean_abs_error_pct']:.1f}% "
                  f"| {s['max_abs_error_pct']:.1f}% | {s['mean_abs_error']:.1f} | {s['max_abs_error']} "
                  f"| {s['exact']}/{s['points']} |")
        else:
            print(f"  {s['board']:13} {s['resource']:4} mean {s['mean_abs_error_pct']:5.1f}%  max "
                  f"{s['max_abs_error_pct']:6.1f}%  (mean {s['mean_abs_error']:7.1f}, max "
                  f"{s['max_abs_error']:5} units)  exact {s['exact']}/{s['points']}")


if __name__ == "__main__":
    sys.exit(main())
