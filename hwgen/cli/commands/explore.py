"""``hwgen explore``: sweep a grid of design points in parallel, cached and resumable, and rank
them on the extended roofline; or, with ``--fast``, predict thousands of points of a kernel, or
every configuration of a pipeline program, from the cycle model and the estimate, and find the
Pareto front of performance against area, re-measured by simulation and synthesis."""

import csv
import io
import json
import time
from dataclasses import replace
from pathlib import Path

from ...catalog import KERNELS, KernelInfo, resolve_board
from ...errors import HwgenError
from ...programs import PROGRAMS
from ...progress import Progress
from ...roofline.fast import (best_per_budget, explore_fast, explore_kernel,
                              explore_program, pareto_front, plot_front, program_jobs,
                              remeasure, unmodelled_text)
from ...sim import HostModel
from ..kernels import user_kernel_grid
from ..options import (add_memory_options, add_option, engine_from_args, memory_from_args,
                       parse_size)
from ..outputs import check_folder_option, write_files
from ..report import check_report_option, report_file
from ...records import ExploreResult
from ..programs import option_error, program_grid
from .roofline import (KERNEL_GRID, OUTPUTS, _parse, add_program_grid_options,
                       add_sweep_options, program_option_flags, refuse_options, run_sweep)

__all__ = ["add_options", "run"]

FAST_OUTPUTS = ("pareto.png", "pareto.csv", "explore.json")
DESCRIPTION = ("Sweep a grid of design points: simulations and resource estimates run in "
               "worker processes (or on a Dask cluster, --scheduler), every finished point is "
               "cached (a stopped sweep resumes "
               "where it was), and the sweep ends with the roofline ("
               + ", ".join(OUTPUTS) + ") and the points ranked by attainable performance. "
               "With --fast, every point of the grid with both register policies and every "
               "PE count that fits one device is predicted by the cycle model and the "
               "estimate instead, in seconds (" + ", ".join(FAST_OUTPUTS) + "); the Pareto "
               "front of performance against LUTs, the best point per area budget, and the "
               "front re-measured by simulation and synthesis with the model's and the "
               "estimate's errors. A PROGRAM (--fast only) is explored over its variants, "
               "thread counts and lanes on the problem the program options give.")

#: The kernel grid's options, which a program does not take.
_KERNEL_GRID = {**KERNEL_GRID, "max_pes": "--max-pes"}


def add_options(parser):
    add_sweep_options(parser, programs=PROGRAMS)
    add_option(parser, "--top", type=int, default=20, metavar="N",
               help="rows of the ranked table, 0 for all")
    fast = parser.add_argument_group("fast exploration")
    add_option(fast, "--fast", action="store_true", shown=None,
               help="predict with the cycle model and the estimate instead of simulating; the "
                    "memory-model options below apply, its bandwidth shared by a point's PEs")
    add_option(fast, "--verify", type=int, default=6, metavar="N",
               help="front points re-measured by simulation and synthesis, 0 for none")
    add_option(fast, "--no-verify-synth", dest="verify_synth", action="store_false",
               help="re-measure the front by simulation only, without synthesizing it",
               shown="each verified point is also synthesized with Yosys, cached, and its "
                     "LUTs set against the estimate's")
    add_option(fast, "--max-pes", type=int, default=64, metavar="P",
               help="kernels: PEs per point at most")
    add_program_grid_options(parser)
    add_memory_options(parser, seeded=None)
    # What the kernel grid's options hold untouched: a program refuses any other value.
    parser.set_defaults(kernel_grid_defaults={dest: parser.get_default(dest)
                                              for dest in _KERNEL_GRID})


def run(args):
    if args.kernel in PROGRAMS and not args.fast:
        raise HwgenError(f"explore {args.kernel}: a program is explored with --fast only")
    if not args.fast:
        if not memory_from_args(args).ideal:
            raise HwgenError("--mem-bandwidth, --mem-latency, --mem-jitter and "
                             "--mem-backpressure apply to --fast only")
        refuse_options(args, program_option_flags(), "to a PROGRAM with --fast")
        return run_sweep(args, ranked=True)
    return _run_fast(args)


def _rows(points, front):
    """Every point's row, as ``pareto.csv`` and ``explore.json`` have it."""
    on_front = {id(p) for p in front}
    return [{**p.row(), "on_front": id(p) in on_front} for p in points]


def _csv(rows):
    text = io.StringIO()
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


def _program_space(args):
    """``(board, out, jobs, host, what)`` of ``explore PROGRAM --fast``, every option checked."""
    refuse_options(args, _KERNEL_GRID, "to a kernel")
    board = resolve_board(args.board)
    stem = PROGRAMS.get_or_error(args.kernel).name
    out = Path(args.out) if args.out else Path(args.command) / f"{stem}-{board.name}"
    check_folder_option("--out", out)
    launch_delay = (HostModel().launch_delay_cycles if args.launch_delay is None
                    else args.launch_delay)
    if launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {launch_delay}")
    kind = PROGRAMS.get_or_error(args.kernel)
    grid = program_grid(args, kind)
    try:
        jobs = program_jobs(kind, grid, name=args.kernel)
    except (TypeError, ValueError) as error:
        raise option_error(error, kind) from None
    what = ", ".join(f"{name} {','.join(map(str, values))}" for name, values in grid.items()
                     if name not in ("variant", "threads", "lanes")) or "default problem"
    return board, out, jobs, HostModel(launch_delay_cycles=launch_delay), what


def _kernel_space(args, kind):
    """``(board, out, grid)`` of ``explore KERNEL --fast`` for an image PE of the user's."""
    board = resolve_board(args.board)
    stem = kind.name
    out = Path(args.out) if args.out else Path(args.command) / f"{stem}-{board.name}"
    check_folder_option("--out", out)
    width, height = parse_size(args.image, "--image")
    defaults = getattr(args, "kernel_grid_defaults", {})
    grid = user_kernel_grid(args, kind, width=width, height=height,
                            sweep_defaults={dest: defaults.get(dest) for dest in _KERNEL_GRID
                                            if dest not in ("image", "max_pes")})
    return board, out, grid


def _run_fast(args):
    check_report_option(args)
    if args.verify < 0:
        raise HwgenError(f"--verify must be 0 (none) or a positive integer, not {args.verify}")
    memory = memory_from_args(args)
    program = args.kernel in PROGRAMS
    kind = None if program else KERNELS.get_or_error(args.kernel)
    own = kind is not None and not isinstance(kind, KernelInfo)
    if program:
        board, out, jobs, host, what = _program_space(args)
    elif own:
        refuse_options(args, program_option_flags(), "to a PROGRAM")
        board, out, grid = _kernel_space(args, kind)
    else:
        refuse_options(args, program_option_flags(), "to a PROGRAM")
        if args.max_pes < 1:
            raise HwgenError(f"--max-pes must be a positive integer, not {args.max_pes}")
        parsed = _parse(args)
        board, out = parsed["board"], parsed["out"]
    synth = args.verify > 0 and args.verify_synth
    if synth and not board.toolchain.has_open_flow:
        raise HwgenError(f"--verify synthesizes the front, which {board.name} ({board.family}) "
                         f"cannot: it has no open synthesis flow; give --no-verify-synth")
    engine = engine_from_args(args, quiet=args.quiet) if args.verify else None
    started = time.perf_counter()
    if program:
        with Progress("estimating pipelines", total=len(jobs), unit="pipeline",
                      enabled=not args.quiet) as bar:
            explored = explore_program(jobs, board, memory, host, progress=bar.update)
        points = explored.points
        if not points:
            raise HwgenError(f"no configuration of {args.kernel} fits one {board.device} of "
                             f"{board.name}: give fewer --threads or --lanes")
        title = f"{PROGRAMS[args.kernel].name} on {board.name}, {what}"
    elif own:
        try:
            points = explore_kernel(args.kernel, grid, board, memory)
        except (TypeError, ValueError) as error:
            raise option_error(error, kind) from None
        if not points:
            raise HwgenError(f"no configuration of {kind.name} fits one {board.device} of "
                             f"{board.name}")
        title = f"{kind.name} on {board.name}, " + ", ".join(
            f"{name} {','.join(map(str, values))}" for name, values in grid.items())
    else:
        points = explore_fast(parsed["points"], board, memory, max_pes=args.max_pes)
        title = (f"{args.kernel} on {board.name}, "
                 f"{points[0].point.width}x{points[0].point.height}")
    seconds = time.perf_counter() - started
    front = pareto_front(points)
    device_luts = board.resources.as_counts()["lut"]
    rows = _rows(points, front)
    budgets = best_per_budget(points, device_luts)
    record = ExploreResult(
        what="program" if program else "kernel", name=args.kernel, title=title,
        board=board.name, device_lut=device_luts, memory=memory, points=tuple(rows),
        budgets=tuple({"share_percent": 100 * share, "lut": luts,
                       "label": None if best is None else best.label,
                       "gops": None if best is None else best.gops}
                      for share, luts, best in budgets),
        predict_seconds=seconds)
    write_files({out / "pareto.png": plot_front(points, front, title=title),
                 out / "pareto.csv": _csv(rows)})
    remeasured = None
    if not args.quiet:
        _print_prediction(args, title, points, front, budgets, seconds, board, out,
                          explored if program else None)
    if args.verify:
        remeasured = _verify(_spread(front, args.verify), memory, board, engine=engine,
                             synth=synth, quiet=args.quiet)
    _write_record(args, replace(record, remeasured=remeasured), out)
    return 0


def _write_record(args, record, out):
    """``explore.json`` in ``out``, and the page of it with ``--report``."""
    path = out / "explore.json"
    data = record.to_json()
    files = {path: json.dumps(data, indent=2) + "\n",
             **report_file(args, data, str(path))}
    write_files(files)
    if not args.quiet:
        print(f"wrote {', '.join(map(str, files))}")


def _print_prediction(args, title, points, front, budgets, seconds, board, out, explored):
    print(f"{title}: {len(points)} design points predicted in {seconds:.1f} s (cycle model + "
          f"estimate, {board.clock_mhz:g} MHz); wrote {out / 'pareto.png'}, {out / 'pareto.csv'}")
    if explored is not None:
        print(f"  {explored.estimated} pipelines estimated, {explored.from_cache} answered from "
              f"the cache; {explored.dropped} did not fit one device, and "
              f"{explored.skipped} with more threads than those were not estimated")
    print(f"Pareto front ({len(front)} points), Gops/s against LUTs:")
    for p in front:
        print(f"  {p.lut:7} LUT {p.gops:9.3f} Gops/s  {p.label} (bound by {p.bound})")
    print("best point per area budget (share of one device's LUTs):")
    for share, luts, best in budgets:
        shown = "n/a" if best is None else f"{best.gops:.3f} Gops/s  {best.label}, {best.lut} LUT"
        print(f"  {share:>5.0%} ({luts:,.0f} LUT): {shown}")


def _verify(points, memory, board, *, engine, synth, quiet=False):
    """Re-measure ``points`` and print the model's and the estimate's errors (unless
    ``quiet``): the :class:`~hwgen.roofline.fast.Remeasured` of each."""
    print = _printer(quiet)
    how = "simulation and synthesis" if synth else "simulation"
    print(f"front re-measured by {how}, {len(points)} points"
          + (f"; Yosys synthesizes {points[0].hardware_note}" if synth else "") + ":")
    cycle_errors, lut_errors, found_all = [], [], []
    for p in points:
        found = remeasure(p, memory, board, engine=engine, synth=synth, progress=not quiet)
        found_all.append(found)
        cycle_errors.append(abs(100 * found.cycle_error))
        line = (f"  {p.label}: model {found.predicted_cycles:,.0f} cycles, simulated "
                f"{found.simulated_cycles:,} ({100 * found.cycle_error:+.2f}%)")
        if synth:
            error = found.lut_error
            line += (f"; estimate {found.estimated_lut:,} LUT, Yosys {found.synthesized_lut:,} "
                     + ("(n/a)" if error is None else f"({100 * error:+.1f}%)"))
            if error is not None:
                lut_errors.append(abs(100 * error))
        print(line, flush=True)
        if synth and p.unmodelled:
            print(f"    the estimate leaves out {unmodelled_text(p.unmodelled)}")
    summary = (f"  model cycle error: mean {sum(cycle_errors) / len(cycle_errors):.2f}%, max "
               f"{max(cycle_errors):.2f}%")
    if lut_errors:
        summary += (f"; estimate LUT error: mean {sum(lut_errors) / len(lut_errors):.1f}%, max "
                    f"{max(lut_errors):.1f}%")
    print(summary)
    return tuple(found_all)


def _printer(quiet):
    """``print``, or a function that prints nothing when ``quiet``."""
    return (lambda *args, **kwargs: None) if quiet else print
