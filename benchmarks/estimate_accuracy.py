"""How wrong and how fast the estimator is, against real synthesis.

Window filters: 3x3 and 5x5 dilation, 512x512 image, U in {1, 2, 4, 8, 16, 32} x buffer
{none, smart, line}, on the boards given (default ``ulx3s-85f`` for ECP5 and ``arty-a7-100t``
for Xilinx 7-series). Programs: the bare PEs of gemm (every variant, 8 threads, 32-bit
integers, 4 lanes, 8 x 8), pi (8 threads, 20 fraction bits, 64 steps) and the example program
``examples/histogram.py:Histogram`` (its default options), as ``hwgen estimate PROGRAM
--no-instrument`` builds them, on the program boards (default one per family:
``ulx3s-85f``, ``arty-a7-100t``, ``alveo-u280``, ``icebreaker``); none of them is in the
calibration set of ``tools/characterize_costs.py``. Instrumented PEs: two PEs with their
default hardware measurement module, as ``hwgen estimate`` builds them by default (dilation
``line`` U = 4 5x3 on 96x64, ``smart`` U = 3 3x3 cross on 80x40), on the filter boards;
neither is a calibration design. For every resource it prints the mean and the largest
absolute error, in percent of the synthesized figure and in units, the exact-match count (the
five programs apart from the example program), and for the filters and the programs the
estimate's wall and processor time and the speed ratio (Yosys synthesis time over estimate
time, elaboration included), then every program's and instrumented PE's figures. Synthesis results are cached
(``hwgen.resources.synth``), so a rerun only re-times the estimates.

    python benchmarks/estimate_accuracy.py [--boards [ulx3s-85f arty-a7-100t ...]]
        [--program-boards B ...] [--jobs 2] [--json FILE] [--markdown] [-q]
"""

import argparse
import itertools
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

from hwgen.boards import get_board
from hwgen.catalog import board_tree_policy, design_name, make_window_filter
from hwgen.discovery import load_spec
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.estimate import estimate
from hwgen.resources.synth import synthesize
from hwgen.sim import instrument_pe
from hwgen.versions import tool_versions

UNROLLS = (1, 2, 4, 8, 16, 32)
BUFFERS = ("none", "smart", "line")
SIZES = (3, 5)
RESOURCES = ("lut", "ff", "bram", "dsp")
PROGRAM_BOARDS = ("ulx3s-85f", "arty-a7-100t", "alveo-u280", "icebreaker")
PROGRAM_POINTS = (("gemm", "naive"), ("gemm", "nocritical"), ("gemm", "vector"),
                  ("gemm", "blocked"), ("pi", "series"), ("histogram", "example"))
#: The example program written outside hwgen: held out of the calibration.
EXAMPLE_PROGRAM = Path(__file__).resolve().parent.parent / "examples" / "histogram.py"
# Instrumented PEs: (buffer, unroll, rows x cols, mask, width x height).
INSTRUMENTED_POINTS = (("line", 4, (5, 3), "rect", (96, 64)),
                       ("smart", 3, (3, 3), "cross", (80, 40)))


def program(name, variant):
    """A benchmark program's bare PE: gemm on 8 x 8 32-bit integers with 8 threads (4 lanes),
    pi over 64 steps with 8 threads and 20 fraction bits, the example histogram with its
    default options."""
    if name == "gemm":
        job = GemmJob(variant, dim=8, threads=8)
    elif name == "pi":
        job = PiJob(steps=64, threads=8, frac_bits=20)
    else:
        job = load_spec(f"{EXAMPLE_PROGRAM}:Histogram", "PROGRAM")()
    return Pipeline(job.program)


def synthesized_program(point):
    board, name, variant = point
    result = synthesize(program(name, variant), board, name=f"{name}_{variant}", fmax=False,
                        require_fit=False)
    return result.resources(), result.synth_seconds


def design(unroll, buffer, size, board):
    """A point of the design space, as `hwgen synth --board` builds it for ``board``."""
    return make_window_filter("dilation", size=(size, size), mask="rect", pixel_bits=8, width=512,
                              height=512, unroll=unroll, buffer=buffer, pipeline=True,
                              tree_stages=board_tree_policy(get_board(board)), credits=None)


def instrumented(board, buffer, unroll, size, mask, image):
    """An instrumented PE as `hwgen estimate dilation` builds it by default (its HMM with the
    default probes)."""
    width, height = image
    pe = make_window_filter("dilation", size=size, mask=mask, pixel_bits=8, width=width,
                            height=height, unroll=unroll, buffer=buffer, pipeline=True,
                            tree_stages=board_tree_policy(get_board(board)), credits=None)
    return f"{design_name('dilation', pe)}_hmm", instrument_pe(
        pe, platform=get_board(board).elaboration_platform())


def synthesized_instrumented(point):
    name, built = instrumented(*point)
    return synthesize(built, point[0], name=name, fmax=False).resources()


def synthesized(point):
    board, unroll, buffer, size = point
    pe = design(unroll, buffer, size, board)
    result = synthesize(pe, board, name=design_name("dilation", pe), fmax=False)
    return result.resources(), result.synth_seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="*", default=["ulx3s-85f", "arty-a7-100t"],
                        help="boards to compare the filters and instrumented PEs on (one per "
                             "family; none: programs only)")
    parser.add_argument("--program-boards", nargs="*", default=list(PROGRAM_BOARDS),
                        help="boards to compare the programs on (none: filters only)")
    parser.add_argument("--jobs", type=int, default=2, help="syntheses run at once")
    parser.add_argument("--json", metavar="FILE", default=None, help="write every point as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the summary as a Markdown table")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    points = [(get_board(b).name, u, buf, n)
              for b, n, buf, u in itertools.product(args.boards, SIZES, BUFFERS, UNROLLS)]
    program_points = [(get_board(b).name, name, variant) for b in args.program_boards
                      for name, variant in PROGRAM_POINTS]
    instrumented_points = [(get_board(b).name, *point) for b in args.boards
                           for point in INSTRUMENTED_POINTS]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        synth = dict(zip(points, tqdm(pool.map(synthesized, points), total=len(points),
                                      desc="synthesis", disable=args.quiet)))
        program_synth = dict(zip(program_points, tqdm(
            pool.map(synthesized_program, program_points), total=len(program_points),
            desc="program synthesis", disable=args.quiet)))
        instrumented_synth = dict(zip(instrumented_points, tqdm(
            pool.map(synthesized_instrumented, instrumented_points),
            total=len(instrumented_points), desc="instrumented synthesis", disable=args.quiet)))
    rows = []
    for point in tqdm(points, desc="estimates", disable=args.quiet):
        board, unroll, buffer, size = point
        est, cpu = _timed_estimate(design(unroll, buffer, size, board), board)
        real, synth_seconds = synth[point]
        rows.append({"board": board, "unroll": unroll, "buffer": buffer, "size": f"{size}x{size}",
                     "synthesis": real, "estimate": est.resources(),
                     "synthesis_seconds": synth_seconds, "estimate_seconds": est.seconds,
                     "estimate_cpu_seconds": cpu})

    program_rows = []
    for point in tqdm(program_points, desc="program estimates", disable=args.quiet):
        board, name, variant = point
        est, cpu = _timed_estimate(program(name, variant), board)
        real, synth_seconds = program_synth[point]
        program_rows.append({"board": board, "program": name, "variant": variant,
                             "synthesis": real, "estimate": est.resources(),
                             "unmodelled": est.unmodelled, "synthesis_seconds": synth_seconds,
                             "estimate_seconds": est.seconds, "estimate_cpu_seconds": cpu})

    instrumented_rows = []
    for point in instrumented_points:
        name, built = instrumented(*point)
        est = estimate(built, point[0])
        instrumented_rows.append({"board": point[0], "design": name,
                                  "synthesis": instrumented_synth[point],
                                  "estimate": est.resources(), "estimate_seconds": est.seconds})

    summary = []
    # The five benchmark programs apart from the example program, which is held out of the
    # calibration: its error says whether the model carries over to a program nobody fitted.
    example = [r for r in program_rows if r["program"] == "histogram"]
    for designs, results in (("filters", rows),
                             ("programs", [r for r in program_rows if r not in example]),
                             ("example program", example),
                             ("instrumented", instrumented_rows)):
        for board in dict.fromkeys(r["board"] for r in results):
            mine = [r for r in results if r["board"] == board]
            summary.extend(_errors(designs, board, mine))
            if designs not in ("filters", "programs"):
                continue
            synth_time = statistics.mean(r["synthesis_seconds"] for r in mine)
            est_time = statistics.mean(r["estimate_seconds"] for r in mine)
            summary.append({"designs": designs, "board": board, "resource": "time",
                            "synthesis_seconds_mean": synth_time,
                            "estimate_seconds_mean": est_time,
                            "estimate_seconds_max": max(r["estimate_seconds"] for r in mine),
                            "estimate_cpu_seconds_mean": statistics.mean(
                                r["estimate_cpu_seconds"] for r in mine),
                            "estimate_cpu_seconds_max": max(r["estimate_cpu_seconds"]
                                                            for r in mine),
                            "speed_ratio": synth_time / est_time})

    print_summary(summary, args.markdown)
    if program_rows:
        print_programs(program_rows, args.markdown)
    if instrumented_rows:
        print_instrumented(instrumented_rows, args.markdown)
    if args.json:
        Path(args.json).write_text(json.dumps({"tool_versions": tool_versions(), "points": rows,
                                               "programs": program_rows,
                                               "instrumented": instrumented_rows,
                                               "summary": summary}, indent=2) + "\n")
    return 0


def _timed_estimate(built, board):
    """``(estimate, processor seconds)``: the processor time of the estimate, elaboration
    included, which other jobs on a shared machine change less than the wall time."""
    started = time.process_time()
    est = estimate(built, board)
    return est, time.process_time() - started


def _errors(designs, board, mine):
    """Per resource: mean and largest absolute error (percent of synthesis, units), exact
    matches; percentages over the points whose synthesized figure is not zero."""
    found = []
    for resource in RESOURCES:
        errors = [abs(r["estimate"][resource] - r["synthesis"][resource]) for r in mine]
        percents = [100 * e / r["synthesis"][resource] for e, r in zip(errors, mine)
                    if r["synthesis"][resource]]
        found.append({
            "designs": designs, "board": board, "family": get_board(board).toolchain.cost_family,
            "resource": resource, "points": len(mine),
            "mean_abs_error_pct": statistics.mean(percents) if percents else None,
            "max_abs_error_pct": max(percents) if percents else None,
            "mean_abs_error": statistics.mean(errors), "max_abs_error": max(errors),
            "exact": sum(e == 0 for e in errors)})
    return found


def print_programs(program_rows, markdown):
    """Every program: estimate / synthesis per resource and the error."""
    _print_points(program_rows, "program", [
        f"gemm {r['variant']}" if r["program"] == "gemm" else r["program"] for r in program_rows],
        markdown)


def print_instrumented(rows, markdown):
    """Every instrumented PE: estimate / synthesis per resource and the error."""
    _print_points(rows, "instrumented PE", [r["design"] for r in rows], markdown)


def _print_points(rows, what, names, markdown):
    if markdown:
        print()
        print(f"| board | {what} | LUT est / Yosys | FF est / Yosys | DSP est / Yosys "
              "| block RAM est / Yosys |")
        print("|---|---|---|---|---|---|")
    for r, name in zip(rows, names):
        cells = []
        for resource in ("lut", "ff", "dsp", "bram"):
            e, y = r["estimate"][resource], r["synthesis"][resource]
            error = f" ({100 * (e - y) / y:+.1f}%)" if y else ""
            cells.append(f"{e} / {y}{error}")
        if markdown:
            print(f"| {r['board']} | {name} | " + " | ".join(cells) + " |")
        else:
            print(f"  {r['board']:13} {name:15} " + "  ".join(
                f"{res} {c}" for res, c in zip(("lut", "ff", "dsp", "bram"), cells)))


def _pct(value):
    return "n/a" if value is None else f"{value:.1f}%"


def print_summary(summary, markdown):
    if markdown:
        print("| designs | board (cost table) | resource | mean abs error | max abs error | "
              "mean abs error (units) | max abs error (units) | exact |")
        print("|---|---|---|---|---|---|---|---|")
    for s in summary:
        if s["resource"] == "time":
            line = (f"synthesis {s['synthesis_seconds_mean']:.2f} s mean, estimate "
                    f"{s['estimate_seconds_mean'] * 1000:.0f} ms mean "
                    f"({s['estimate_seconds_max'] * 1000:.0f} ms max; processor time "
                    f"{s['estimate_cpu_seconds_mean'] * 1000:.0f} ms mean, "
                    f"{s['estimate_cpu_seconds_max'] * 1000:.0f} ms max): "
                    f"{s['speed_ratio']:.0f}x faster")
            print(f"| {s['designs']} | {s['board']} | speed | {line} ||||" if markdown
                  else f"  {s['designs']:8} {s['board']}: {line}")
            continue
        if markdown:
            print(f"| {s['designs']} | {s['board']} ({s['family']}) | {s['resource']} | "
                  f"{_pct(s['mean_abs_error_pct'])} | {_pct(s['max_abs_error_pct'])} | "
                  f"{s['mean_abs_error']:.1f} | {s['max_abs_error']} | {s['exact']}/{s['points']} |")
        else:
            print(f"  {s['designs']:8} {s['board']:13} {s['resource']:4} mean "
                  f"{_pct(s['mean_abs_error_pct']):>6}  max {_pct(s['max_abs_error_pct']):>6}  "
                  f"(mean {s['mean_abs_error']:7.1f}, max {s['max_abs_error']:5} units)  "
                  f"exact {s['exact']}/{s['points']}")


if __name__ == "__main__":
    sys.exit(main())
