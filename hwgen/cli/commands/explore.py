"""``hwgen explore``: sweep a grid of design points in parallel, cached and resumable, and rank
them on the extended roofline; or, with ``--fast``, predict thousands of points from the cycle
model and the estimate, and find the Pareto front of performance against area."""

import csv
import io
import os
import time

from ...errors import HwgenError
from ...roofline.fast import best_per_budget, explore_fast, pareto_front, plot_front, verify
from ..options import add_memory_options, add_option, engine_from_args, memory_from_args
from ..outputs import write_files
from .roofline import OUTPUTS, _parse, add_sweep_options, run_sweep

__all__ = ["add_options", "run"]

NAME = "explore"
HELP = "sweep design points in parallel and rank them on the roofline"
FAST_OUTPUTS = ("pareto.png", "pareto.csv")
DESCRIPTION = ("Sweep a grid of design points: simulations and resource estimates run in "
               "worker processes (or on a Dask cluster, --scheduler), every finished point is "
               "cached (a stopped sweep resumes "
               "where it was), and the sweep ends with the roofline ("
               + ", ".join(OUTPUTS) + ") and the points ranked by attainable performance. "
               "With --fast, every point of the grid with both register policies and every "
               "PE count that fits one device is predicted by the cycle model and the "
               "estimate instead, in seconds (" + ", ".join(FAST_OUTPUTS) + "); the Pareto "
               "front of performance against LUTs, the best point per area budget, and the "
               "front re-measured by simulation with the model's error.")


def add_options(parser):
    add_sweep_options(parser, jobs=os.cpu_count() or 1)
    add_option(parser, "--top", type=int, default=20, metavar="N",
               help="rows of the ranked table, 0 for all")
    fast = parser.add_argument_group("fast exploration")
    add_option(fast, "--fast", action="store_true", shown=None,
               help="predict with the cycle model and the estimate instead of simulating; the "
                    "memory-model options below apply, its bandwidth shared by a point's PEs")
    add_option(fast, "--verify", type=int, default=6, metavar="N",
               help="front points re-measured by simulation, 0 for none")
    add_option(fast, "--max-pes", type=int, default=64, metavar="P", help="PEs per point at most")
    add_memory_options(parser, seeded=None)


def run(args):
    if not args.fast:
        if not memory_from_args(args).ideal:
            raise HwgenError("--mem-bandwidth, --mem-latency, --mem-jitter and "
                             "--mem-backpressure apply to --fast only")
        return run_sweep(args, ranked=True)
    return _run_fast(args)


def _csv(points, front):
    on_front = {id(p) for p in front}
    text = io.StringIO()
    rows = [{**p.row(), "on_front": id(p) in on_front} for p in points]
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def _spread(front, count):
    """Up to ``count`` points spread along the front, its ends included."""
    if count >= len(front):
        return list(front)
    if count == 1:
        return [front[-1]]
    return [front[round(i * (len(front) - 1) / (count - 1))] for i in range(count)]


def _run_fast(args):
    if args.verify < 0:
        raise HwgenError(f"--verify must be 0 (none) or a positive integer, not {args.verify}")
    if args.max_pes < 1:
        raise HwgenError(f"--max-pes must be a positive integer, not {args.max_pes}")
    memory = memory_from_args(args)
    parsed = _parse(args)
    engine = engine_from_args(args, quiet=args.quiet) if args.verify else None
    board, out = parsed["board"], parsed["out"]
    started = time.perf_counter()
    points = explore_fast(parsed["points"], board, memory, max_pes=args.max_pes)
    seconds = time.perf_counter() - started
    front = pareto_front(points)
    device_luts = board.resources.as_counts()["lut"]
    title = f"{args.kernel} on {board.name}, {points[0].point.width}x{points[0].point.height}"
    write_files({out / "pareto.png": plot_front(points, front, title=title),
                 out / "pareto.csv": _csv(points, front)})
    if args.quiet:
        return 0
    print(f"{title}: {len(points)} design points predicted in {seconds:.1f} s (cycle model + "
          f"estimate, {board.clock_mhz:g} MHz); wrote {out / 'pareto.png'}, {out / 'pareto.csv'}")
    print(f"Pareto front ({len(front)} points), Gops/s against LUTs:")
    for p in front:
        print(f"  {p.lut:7} LUT {p.gops:9.3f} Gops/s  {p.label} (bound by {p.bound})")
    print("best point per area budget (share of one device's LUTs):")
    for share, luts, best in best_per_budget(points, device_luts):
        shown = "n/a" if best is None else f"{best.gops:.3f} Gops/s  {best.label}, {best.lut} LUT"
        print(f"  {share:>5.0%} ({luts:,.0f} LUT): {shown}")
    if args.verify:
        print(f"front re-measured by simulation ({min(args.verify, len(front))} points):")
        errors = []
        for p in _spread(front, args.verify):
            simulated = verify(p, memory, engine=engine)
            error = 100 * (p.cycles - simulated) / simulated
            errors.append(abs(error))
            print(f"  {p.label}: model {p.cycles:,.0f} cycles, simulated {simulated:,} "
                  f"({error:+.2f}%)")
        print(f"  model error: mean {sum(errors) / len(errors):.2f}%, max {max(errors):.2f}%")
    return 0
