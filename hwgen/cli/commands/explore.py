"""``hwgen explore``: sweep a grid of design points in parallel, cached and resumable, and rank
them on the extended roofline; or, with ``--fast``, predict thousands of points of a kernel, or
every configuration of a pipeline program, from the cycle model and the estimate, and find the
Pareto front of performance against area, re-measured by simulation and synthesis."""

import csv
import io
import os
import time
from pathlib import Path

from ...catalog import resolve_board
from ...errors import HwgenError
from ...programs import PROGRAMS, GemmJob, PiJob
from ...progress import Progress
from ...roofline.fast import (MAX_DEFAULT_LANES, THREAD_COUNTS, best_per_budget, explore_fast,
                              explore_program, pareto_front, plot_front, program_jobs,
                              remeasure, unmodelled_text)
from ...sim import HostModel
from ..options import add_memory_options, add_option, engine_from_args, memory_from_args
from ..outputs import check_folder_option, write_files
from .roofline import OUTPUTS, _list, _parse, _positive, add_sweep_options, run_sweep

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
               "front re-measured by simulation and synthesis with the model's and the "
               "estimate's errors. A PROGRAM (--fast only) is explored over its variants, "
               "thread counts and lanes on the problem the program options give.")

#: The kernel grid's options, which a program does not take.
_KERNEL_GRID = {"unroll": "--unroll", "buffer": "--buffer", "pipeline": "--pipeline",
                "size": "--size", "mask": "--mask", "image": "--image", "max_pes": "--max-pes"}
#: The program options, which a kernel does not take.
_PROGRAM_OPTIONS = {"variant": "--variant", "threads": "--threads", "lanes": "--lanes",
                    "dim": "--dim", "steps": "--steps", "element_bits": "--element-bits",
                    "frac_bits": "--frac-bits", "launch_delay": "--launch-delay"}


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
    gemm, pi = GemmJob.options, PiJob.options
    program = parser.add_argument_group("program design space (PROGRAM with --fast; lists are "
                                        "comma-separated)")
    add_option(program, "--variant", default=None, metavar="LIST",
               help=f"variants: gemm {','.join(GemmJob.variants)}; pi "
                    f"{','.join(PiJob.variants)}", shown="every variant")
    add_option(program, "--threads", default=None, metavar="LIST",
               help="hardware thread counts, 1..64 (blocked: from 2)",
               shown=",".join(map(str, THREAD_COUNTS)))
    add_option(program, "--lanes", default=None, metavar="LIST",
               help="gemm vector and blocked: elements per vector request, each dividing --dim",
               shown=f"the powers of two up to {MAX_DEFAULT_LANES} that divide --dim")
    size = program.add_mutually_exclusive_group()
    add_option(size, "--dim", type=int, default=None, metavar="N", help="gemm: matrix size",
               shown=gemm["dim"]["default"])
    add_option(size, "--steps", type=int, default=None, metavar="S",
               help="pi: steps of the series", shown=pi["steps"]["default"])
    add_option(program, "--element-bits", type=int, default=None, metavar="B",
               help="gemm: bits per matrix element", shown=gemm["element_bits"]["default"])
    add_option(program, "--frac-bits", type=int, default=None, metavar="F",
               help="fixed-point fraction bits",
               shown=f"gemm {gemm['frac_bits']['default']} = integers, pi "
                     f"{pi['frac_bits']['default']}")
    add_option(program, "--launch-delay", type=int, default=None, metavar="CYCLES",
               help="host cycles to start one thread", shown=HostModel().launch_delay_cycles)
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
        _refuse(args, _PROGRAM_OPTIONS, "to a PROGRAM with --fast")
        return run_sweep(args, ranked=True)
    return _run_fast(args)


def _refuse(args, options, applies):
    """One line for the first option of ``options`` (dest: flag) that was given."""
    defaults = getattr(args, "kernel_grid_defaults", {})
    for dest, flag in options.items():
        if getattr(args, dest) != defaults.get(dest):
            raise HwgenError(f"{flag} applies {applies}, not to {args.kernel}")


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


def _problem(args):
    """The job's keyword arguments the program options give, beside variants, threads and lanes,
    and a line that says them."""
    if args.kernel == "gemm":
        if args.steps is not None:
            raise HwgenError("--steps applies to pi; gemm takes --dim")
        defaults = GemmJob.options
        problem = {"dim": defaults["dim"]["default"] if args.dim is None else args.dim,
                   "element_bits": (defaults["element_bits"]["default"]
                                    if args.element_bits is None else args.element_bits),
                   "frac_bits": (defaults["frac_bits"]["default"] if args.frac_bits is None
                                 else args.frac_bits)}
        kind = (f"Q{problem['element_bits'] - problem['frac_bits']}.{problem['frac_bits']}"
                if problem["frac_bits"] else f"int{problem['element_bits']}")
        return problem, f"dim {problem['dim']}, {kind}"
    if args.dim is not None:
        raise HwgenError("--dim applies to gemm; pi takes --steps")
    if args.element_bits is not None:
        raise HwgenError("--element-bits applies to gemm, not pi")
    defaults = PiJob.options
    problem = {"steps": defaults["steps"]["default"] if args.steps is None else args.steps,
               "frac_bits": (defaults["frac_bits"]["default"] if args.frac_bits is None
                             else args.frac_bits)}
    return problem, f"{problem['steps']} steps, Q.{problem['frac_bits']}"


def _program_space(args):
    """``(board, out, jobs, host, what)`` of ``explore PROGRAM --fast``, every option checked."""
    _refuse(args, _KERNEL_GRID, "to a kernel")
    board = resolve_board(args.board)
    out = Path(args.out) if args.out else Path(args.command) / f"{args.kernel}-{board.name}"
    check_folder_option("--out", out)
    launch_delay = (HostModel().launch_delay_cycles if args.launch_delay is None
                    else args.launch_delay)
    if launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {launch_delay}")
    problem, what = _problem(args)
    variants = None if args.variant is None else _list("--variant", args.variant, str.strip,
                                                         "variants")
    threads = (THREAD_COUNTS if args.threads is None
               else _list("--threads", args.threads, int, "integers"))
    lanes = None if args.lanes is None else _list("--lanes", args.lanes, _positive,
                                                  "positive integers")
    jobs = program_jobs(args.kernel, variants=variants, threads=threads, lanes=lanes, **problem)
    return board, out, jobs, HostModel(launch_delay_cycles=launch_delay), what


def _run_fast(args):
    if args.verify < 0:
        raise HwgenError(f"--verify must be 0 (none) or a positive integer, not {args.verify}")
    memory = memory_from_args(args)
    program = args.kernel in PROGRAMS
    if program:
        board, out, jobs, host, what = _program_space(args)
    else:
        _refuse(args, _PROGRAM_OPTIONS, "to a PROGRAM")
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
        title = f"{args.kernel} on {board.name}, {what}"
    else:
        points = explore_fast(parsed["points"], board, memory, max_pes=args.max_pes)
        title = (f"{args.kernel} on {board.name}, "
                 f"{points[0].point.width}x{points[0].point.height}")
    seconds = time.perf_counter() - started
    front = pareto_front(points)
    device_luts = board.resources.as_counts()["lut"]
    write_files({out / "pareto.png": plot_front(points, front, title=title),
                 out / "pareto.csv": _csv(points, front)})
    if args.quiet:
        return 0
    print(f"{title}: {len(points)} design points predicted in {seconds:.1f} s (cycle model + "
          f"estimate, {board.clock_mhz:g} MHz); wrote {out / 'pareto.png'}, {out / 'pareto.csv'}")
    if program:
        print(f"  {explored.estimated} pipelines estimated, {explored.from_cache} answered from "
              f"the cache; {explored.dropped} did not fit one device, and "
              f"{explored.skipped} with more threads than those were not estimated")
    print(f"Pareto front ({len(front)} points), Gops/s against LUTs:")
    for p in front:
        print(f"  {p.lut:7} LUT {p.gops:9.3f} Gops/s  {p.label} (bound by {p.bound})")
    print("best point per area budget (share of one device's LUTs):")
    for share, luts, best in best_per_budget(points, device_luts):
        shown = "n/a" if best is None else f"{best.gops:.3f} Gops/s  {best.label}, {best.lut} LUT"
        print(f"  {share:>5.0%} ({luts:,.0f} LUT): {shown}")
    if args.verify:
        _verify(_spread(front, args.verify), memory, board, engine=engine, synth=synth)
    return 0


def _verify(points, memory, board, *, engine, synth):
    """Re-measure ``points`` and print the model's and the estimate's errors."""
    how = "simulation and synthesis" if synth else "simulation"
    print(f"front re-measured by {how}, {len(points)} points"
          + (f"; Yosys synthesizes {points[0].hardware_note}" if synth else "") + ":")
    cycle_errors, lut_errors = [], []
    for p in points:
        found = remeasure(p, memory, board, engine=engine, synth=synth, progress=True)
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
