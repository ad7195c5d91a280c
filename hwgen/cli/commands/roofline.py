"""``hwgen roofline``: measure a grid of design points and draw the extended roofline.

``hwgen explore`` (:mod:`.explore`) takes the same options and runs the same sweep; this module
holds both the options and the sweep's outputs.
"""

import csv
import io
import itertools
import json
import os
import shutil
import warnings
from contextlib import nullcontext
from pathlib import Path

from amaranth.hdl import UnusedElaboratable

from ...kernels import BUFFERS, MASK_SHAPES

from ...errors import HwgenError, SuspectMeasurement
from ...catalog import KERNELS, KernelInfo, board_tree_policy, resolve_board
from ...programs import PROGRAMS
from ...sim import HostModel
from ..figures import NOT_AVAILABLE, figure
from ..kernels import add_user_kernel_options, user_kernel_grid
from ..programs import (add_program_options, named_programs, option_error, program_grid,
                        program_options)
from ..measured import DEFAULT_BOARD
from ..options import (DEFAULT_SIZE, add_board_option, add_engine_option, add_link_option,
                       add_option, add_quiet_option, engine_from_args, mask_from_args,
                       parse_size)
from ..outputs import check_folder_option, write_files
from ..report import add_report_option, check_report_option, report_file
from ...roofline.cluster import Cluster, check_scheduler
from ...roofline.model import CLOCK_CHOICES, build_roofline, check_clock, logic_cells, placeable
from ...roofline.confirm import confirm_point
from ...roofline.fast import program_jobs
from ...roofline.program import build_program_roofline, confirm_program, program_points
from ...roofline.sweep import RESOURCE_METHODS, DesignPoint, KernelDesignPoint, design_grid
from ...versions import tool_versions

__all__ = ["KERNEL_GRID", "add_options", "add_program_grid_options", "add_sweep_options",
           "program_option_flags", "refuse_options", "run", "run_sweep"]

OUTPUTS = ("roofline.png", "roofline.svg", "points.csv", "roofline.json")
_PIPELINE = {"on": (True,), "off": (False,), "both": (True, False)}


#: The window grid's options and their defaults (a kernel of the user's takes ``--unroll`` only if
#: it declares ``unroll``).
GRID_DEFAULTS = {"unroll": "1,2,4,8", "buffer": "smart,line", "pipeline": "on", "size": None,
                 "mask": "rect"}


#: The kernel grid's options (dest: flag), which a program does not take.
KERNEL_GRID = {"unroll": "--unroll", "buffer": "--buffer", "pipeline": "--pipeline",
               "size": "--size", "mask": "--mask", "image": "--image"}


def program_option_flags():
    """The program options (dest: flag), which a kernel does not take."""
    options = {f"program_{name}": declared[0][1].flag
               for name, declared in program_options(named_programs()).items() if name != "seed"}
    return {**options, "launch_delay": "--launch-delay"}


def refuse_options(args, options, applies):
    """One line for the first option of ``options`` (dest: flag) that was given."""
    defaults = getattr(args, "kernel_grid_defaults", {})
    for dest, flag in options.items():
        if getattr(args, dest) != defaults.get(dest):
            raise HwgenError(f"{flag} applies {applies}, not to {args.kernel}")


def add_program_grid_options(parser):
    """A program's options, each a comma-separated list (its design space), and the host's."""
    add_program_options(parser, host=False, lists=True)
    add_option(parser, "--launch-delay", type=int, default=None, metavar="CYCLES",
               help="programs: host cycles to start one thread",
               shown=HostModel().launch_delay_cycles)


def add_sweep_options(parser, *, programs=(), fast_programs=True):
    """The options ``roofline`` and ``explore`` share (``programs``: the positional may name one
    of these programs too; with ``fast_programs``, under ``--fast`` only)."""
    if programs:
        parser.add_argument("kernel", metavar="KERNEL|PROGRAM",
                            help=f"dilation or erosion, or an image PE of your own as "
                                 f"module:Name or file.py:Name; or"
                                 f"{', with --fast,' if fast_programs else ''} a program, one "
                                 f"of: {', '.join(programs)}, or a job of your own as "
                                 f"module:Name or file.py:Name")
    else:
        parser.add_argument("kernel", metavar="KERNEL", help="dilation or erosion")
    grid = parser.add_argument_group("design points (lists are comma-separated)")
    add_option(grid, "--unroll", default=GRID_DEFAULTS["unroll"], metavar="LIST", help="outputs per cycle U")
    add_option(grid, "--buffer", default=GRID_DEFAULTS["buffer"], metavar="LIST",
               help=f"buffer strategies, of {', '.join(BUFFERS)}")
    add_option(grid, "--pipeline", default=GRID_DEFAULTS["pipeline"], choices=list(_PIPELINE),
               help="pipelined PEs, unpipelined ones (for the pipelining ceiling) or both")
    add_option(grid, "--size", default=None, metavar="NxM", help="window rows x columns",
               shown="the --mask file's shape, else {}x{}".format(*DEFAULT_SIZE))
    add_option(grid, "--mask", default=GRID_DEFAULTS["mask"], metavar="|".join([*MASK_SHAPES, "FILE"]),
               help="structuring element, or a .npy / text file of 0/1 rows (`0 1 0`, `0,1,0` "
                    "or `010`)")
    add_option(grid, "--image", default="512x512", metavar="WxH",
               help="frame width x height; the compiled engine simulates it whole, Amaranth's "
                    "simulator two short frames that are scaled to it")
    add_user_kernel_options(grid, lists=True)
    board = parser.add_argument_group("board and model")
    add_board_option(board, default=DEFAULT_BOARD, help="the board whose roofline it is")
    add_option(board, "--devices", default=None, metavar="LIST",
               help="device counts to fill with PEs", shown="1 up to the board's count")
    add_option(board, "--resources", default="estimate", choices=RESOURCE_METHODS,
               help="resources per bare PE (without its HMM) from the fast estimate or from "
                    "Yosys")
    add_option(board, "--clock", default="board", metavar="|".join([*CLOCK_CHOICES, "MHZ"]),
               help="the board's default clock, nextpnr's Fmax per point (ecp5 and ice40 boards) "
                    "or a clock in MHz")
    add_link_option(board, shown="the tightest link at each device count")
    add_option(board, "--ceiling-clocks", default=None, metavar="LIST",
               help="clocks in MHz of the frequency ceilings", shown="1/4, 1/2 and 3/4 of the clock")
    add_option(board, "--pes", type=int, default=None, metavar="P",
               help="also simulate P PEs sharing a memory with the bounding link's bandwidth, "
                    "against the model's prediction", shown="no system simulation")
    run = parser.add_argument_group("running")
    add_option(run, "--out", default=None, metavar="DIR",
               help=f"folder for {', '.join(OUTPUTS)}",
               shown=f"{parser.prog.split()[-1]}/KERNEL-BOARD")
    add_option(run, "-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
               help="worker processes on this machine (not used with --scheduler)",
               shown="one per CPU")
    add_option(run, "--scheduler", default=None, metavar="ADDRESS|local:N",
               help="run every simulation, estimate, synthesis and place and route on a Dask "
                    "cluster: a running scheduler's address (tcp://host:8786), or local:N to "
                    "start N worker processes here; needs pip install -e '.[cluster]'",
               shown="no cluster")
    add_report_option(run)
    add_engine_option(run)
    add_quiet_option(run, "no progress, print only the best point")


DESCRIPTION = ("Simulate every design point (one PE configuration) for its ops per cycle and "
               "computational intensity, find its resources per PE, and place it on the "
               "board's extended roofline: compute roof = PEs that fit x one PE's "
               "performance, I/O roofs = the board's links. Writes "
               + ", ".join(OUTPUTS) + " and prints the design point that attains the most. "
               "Every finished measurement is cached. A PROGRAM's jobs (the product of the "
               "lists its options are given) are placed as PEs, one pipeline each: ops per "
               "cycle from the cycle model, CI from the job's traffic, SC from the pipeline's "
               "estimate.")


def add_options(parser):
    add_sweep_options(parser, programs=PROGRAMS, fast_programs=False)
    add_option(parser, "--confirm", action="store_true",
               help="synthesize the best point's system of SC PEs (bare, with its memory "
                    "interconnect) on one device, place and route it where the family can "
                    "(with --resources synth or --clock fmax; else its clock is the roofline's, "
                    "stated), compare it with the model's SC x one PE + the interconnect, and "
                    "simulate what it attains against the link; for a program, simulate the "
                    "best point's job against the cycle model; writes confirm.json",
               shown="no confirmation")
    add_program_grid_options(parser)
    parser.set_defaults(kernel_grid_defaults={dest: parser.get_default(dest)
                                              for dest in KERNEL_GRID})


def run(args):
    if args.kernel in PROGRAMS:
        return run_program_roofline(args)
    refuse_options(args, program_option_flags(), "to a PROGRAM")
    return run_sweep(args, ranked=False)


def _list(option, text, convert, allowed):
    values = []
    for item in text.split(","):
        try:
            values.append(convert(item.strip()))
        except ValueError:
            raise HwgenError(f"{option} must be a comma-separated list of {allowed}, "
                             f"not {text!r}") from None
    if not values or len(set(values)) != len(values):
        raise HwgenError(f"{option} must be a comma-separated list of distinct {allowed}, "
                         f"not {text!r}")
    return values


def _positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _mhz(text):
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(text)
    return value


def _buffer(text):
    if text not in BUFFERS:
        raise ValueError(text)
    return text


def _clock(text):
    """A number of MHz, else the text (``check_clock`` says what is allowed)."""
    try:
        return float(text)
    except ValueError:
        return text


def _own_points(args, kind, width, height):
    """The design points of an image PE of the user's: every combination of the lists its
    options are given, each built once to check it."""
    if getattr(args, "pes", None) is not None:
        raise HwgenError(f"--pes simulates systems of window filters; {kind.name} is a PE of its "
                         f"own: leave --pes out")
    grid = user_kernel_grid(args, kind, width=width, height=height, sweep_defaults=GRID_DEFAULTS)
    points = [KernelDesignPoint(args.kernel, tuple(zip(grid, values)))
              for values in itertools.product(*grid.values())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # built to check them only
        for point in points:
            try:
                point.build()
            except (TypeError, ValueError) as error:
                raise option_error(error, kind) from None
    return points


def _parse_common(args, stem):
    """The options every roofline takes, checked: board, clock, output folder, device counts,
    frequency ceilings and scheduler."""
    board = resolve_board(args.board)
    clock = check_clock(_clock(args.clock))
    if getattr(args, "top", 0) < 0:
        raise HwgenError(f"--top must be 0 (all) or a positive integer, not {args.top}")
    out = Path(args.out) if args.out else Path(args.command) / f"{stem}-{board.name}"
    check_folder_option("--out", out)
    check_report_option(args)
    return {
        "board": board, "clock": clock, "out": out,
        "devices": None if args.devices is None else _list("--devices", args.devices, _positive,
                                                           "positive integers"),
        "ceiling_clocks_mhz": None if args.ceiling_clocks is None else _list(
            "--ceiling-clocks", args.ceiling_clocks, _mhz, "positive numbers of MHz"),
        "scheduler": None if args.scheduler is None else check_scheduler(args.scheduler),
    }


def _parse(args):
    """Every option, checked before anything runs."""
    kind = KERNELS.get_or_error(args.kernel)
    stem = args.kernel if isinstance(kind, KernelInfo) else kind.name
    common = _parse_common(args, stem)
    board = common["board"]
    width, height = parse_size(args.image, "--image", "WxH", "512x512")
    if not isinstance(kind, KernelInfo):
        points = _own_points(args, kind, width, height)
    else:
        size, mask = mask_from_args(args)
        if not isinstance(mask, str):
            mask = tuple(tuple(int(v) for v in row) for row in mask.tolist())
        points = design_grid(
            args.kernel, unrolls=_list("--unroll", args.unroll, _positive, "positive integers"),
            buffers=_list("--buffer", args.buffer, _buffer, ", ".join(BUFFERS)),
            pipelines=_PIPELINE[args.pipeline], size=size, mask=mask,
            width=width, height=height, tree_stages=board_tree_policy(board))
    return {"points": points, **common}


# -- outputs -------------------------------------------------------------------------------------

_COLUMNS = (
    ("label", lambda p: p.label),
    ("name", lambda p: p.measurement.name),
    ("buffer", lambda p: p.measurement.point.buffer),
    ("unroll", lambda p: p.measurement.point.unroll),
    ("pipeline", lambda p: p.measurement.point.pipeline),
    ("devices", lambda p: p.devices),
    ("width", lambda p: p.measurement.frame.width),
    ("height", lambda p: p.measurement.frame.height),
    ("cycles", lambda p: p.measurement.frame.cycles),
    ("ops", lambda p: p.measurement.frame.ops),
    ("bytes_read", lambda p: p.measurement.frame.bytes_read),
    ("bytes_written", lambda p: p.measurement.frame.bytes_written),
    ("scaled", lambda p: p.measurement.frame.scaled),
    ("ci_ops_per_byte", lambda p: p.ci_ops_per_byte),
    ("ops_per_cycle", lambda p: p.ops_per_cycle),
    ("lut", lambda p: p.measurement.resources["lut"]),
    ("ff", lambda p: p.measurement.resources["ff"]),
    ("bram", lambda p: p.measurement.resources["bram"]),
    ("dsp", lambda p: p.measurement.resources["dsp"]),
    ("resources_source", lambda p: p.measurement.resources_source),
    ("clock_mhz", lambda p: p.clock_mhz),
    ("clock_source", lambda p: p.clock_source),
    ("sc_pes_per_device", lambda p: p.sc_pes_per_device),
    ("limiting_resource", lambda p: p.limiting_resource),
    ("perf_pe_gbops", lambda p: p.perf_pe_gbops),
    ("cp_gbops", lambda p: p.cp_gbops),
    ("link", lambda p: p.link),
    ("bandwidth_gbps", lambda p: p.bandwidth_gbps),
    ("io_roof_gbops", lambda p: p.io_roof_gbops),
    ("attainable_gbops", lambda p: p.attainable_gbops),
    ("bound", lambda p: p.bound),
    ("bound_by", lambda p: p.bound_by),
    ("saturated", lambda p: " ".join(p.saturated)),
    ("resources_unmodelled", lambda p: _unmodelled(p.measurement)),
)
_SYSTEM_COLUMNS = (
    ("system_pes", lambda s: s.pes),
    ("system_height", lambda s: s.height),
    ("system_bandwidth_bytes_per_cycle", lambda s: s.bandwidth_bytes_per_cycle),
    ("system_predicted_ops_per_cycle", lambda s: s.predicted_ops_per_cycle),
    ("system_simulated_ops_per_cycle", lambda s: s.simulated_ops_per_cycle),
    ("system_error", lambda s: s.error),
)


def _unmodelled(measurement):
    """``2 x operator * (8 bits); ...``: what a point's resource figures leave out."""
    return "; ".join(f"{n} x {what}" for what, n in measurement.resources_unmodelled.items())


def points_csv(roofline):
    """``points.csv``: one row per design point and device count; an undefined figure is an
    empty cell, ``saturated`` names the HMM values that saturated (space-separated)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    systems = roofline.options["pes"] is not None
    writer.writerow([name for name, _ in _COLUMNS]
                    + ([name for name, _ in _SYSTEM_COLUMNS] if systems else []))
    for p in roofline.points:
        writer.writerow([get(p) for _, get in _COLUMNS]
                        + ([get(p.system) for _, get in _SYSTEM_COLUMNS] if systems else []))
    return text.getvalue()


def write_outputs(roofline, out):
    """Write every output into ``out`` at once: all of them are made in a scratch folder first."""
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / f".partial-{os.getpid()}"
    scratch.mkdir()
    try:
        from ...roofline.figure import plot_roofline    # matplotlib, only to draw
        plot_roofline(roofline, [scratch / "roofline.png", scratch / "roofline.svg"])
        (scratch / "points.csv").write_text(points_csv(roofline))
        (scratch / "roofline.json").write_text(json.dumps(roofline.to_json(), indent=2) + "\n")
        for name in OUTPUTS:
            (scratch / name).replace(out / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- report --------------------------------------------------------------------------------------

def _devices(count):
    return f"{count} FPGA" + ("s" if count > 1 else "")


def _format(head, rows, text):
    """Lines of a table; columns named in ``text`` are left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    return ["  ".join(c.ljust(w) if name in text else c.rjust(w)
                      for name, c, w in zip(head, row, widths)).rstrip() for row in (head, *rows)]


def _gbops(value, spec=".2f"):
    """GBops/s as the tables give them, with two significant digits where ``spec`` would show a
    small figure as 0.00 (a pipeline's few ops per cycle)."""
    if value is not None and 0 < value < 0.01:
        return f"{value:.2g}"
    return figure(value, spec)


def _table(points, ranked):
    head = (("#",) if ranked else ()) + (
        "design point", "FPGAs", "CI", "LUT", "FF", "BRAM", "DSP", "SC", "limit", "perf_PE",
        "CP", "attainable", "bound")
    rows = []
    for rank, p in enumerate(points, 1):
        r = p.measurement.resources
        bound = {"compute": "compute", "io": f"I/O: {p.link}", None: NOT_AVAILABLE}[p.bound]
        rows.append(((str(rank),) if ranked else ()) + (
            p.label + (" SATURATED" if p.saturated else ""), str(p.devices),
            figure(p.ci_ops_per_byte), str(r["lut"]), str(r["ff"]), str(r["bram"]),
            str(r["dsp"]), str(p.sc_pes_per_device), p.limiting_resource,
            _gbops(p.perf_pe_gbops), _gbops(p.cp_gbops, ".1f"),
            _gbops(p.attainable_gbops), bound))
    return _format(head, rows, {"design point", "limit", "bound"})


def why(roofline):
    """Lines saying which design point attains the most and why."""
    best = roofline.best()
    if best is None:
        return ["no design point is placed: every one has an undefined CI or perf_PE"]
    m = best.measurement
    tied = [p for p in roofline.points if p is not best and p.placed
            and abs(p.attainable_gbops - best.attainable_gbops) <= 1e-3 * best.attainable_gbops]
    limit = best.limiting_resource
    system = isinstance(m.point, DesignPoint)    # SC counts a system of window filters
    room = ""       # the placement headroom SC leaves where nextpnr places
    cells = logic_cells(roofline.board)
    if system and cells is not None and limit in ("lut", "ff"):
        room = f"; LUT + FF within {cells} logic cells"
    elif system and placeable(roofline.board)[limit] < best.available_per_device[limit]:
        room = f"; {placeable(roofline.board)[limit]} placeable"
    compute = (f"compute roof {best.cp_gbops:.1f} GBops/s = {best.sc_pes_per_device} PEs per FPGA "
               f"(limited by {limit.upper()}: {m.resources[limit]} per PE"
               f"{' and the interconnect' if system else ''} of "
               f"{best.available_per_device[limit]}{room}) x "
               f"{_gbops(best.perf_pe_gbops)} GBops/s per PE ({best.ops_per_cycle:.2f} "
               f"ops/cycle at "
               f"{best.clock_mhz:g} MHz) x {best.devices}")
    io_roof = (f"I/O roof {best.io_roof_gbops:.2f} GBops/s = CI {best.ci_ops_per_byte:.3f} ops/B x "
               f"{best.bandwidth_gbps:g} GB/s ({best.link})")
    lines = [f"best: {best.label} on {_devices(best.devices)} attains "
             f"{best.attainable_gbops:.2f} GBops/s, "
             + ("compute-bound" if best.bound == "compute" else "I/O-bound")]
    roofs = [io_roof, compute] if best.bound == "io" else [compute, io_roof]
    lines += [f"  {roof}" for roof in roofs]
    if tied:
        lines.append(f"  {len(tied)} other point(s) attain the same; {best.label} is first by "
                     f"fewer LUT per PE: " + ", ".join(f"{p.label} on {_devices(p.devices)}"
                                                      for p in tied[:6])
                     + (" ..." if len(tied) > 6 else ""))
    for c in roofline.ceilings(best):
        lines.append(f"  ceiling {c.label}: {c.gbops:.1f} GBops/s"
                     + (" (below the I/O roof: it would bound)" if c.gbops < best.io_roof_gbops
                        else ""))
    return lines


def _system_table(roofline):
    head = ("design point", "FPGAs", "P", "B/cycle", "rows", "P x perf_PE", "CI x BW", "port",
            "predicted", "simulated", "error")
    rows = []
    for p in roofline.points:
        s = p.system
        error = NOT_AVAILABLE if s.error is None else f"{100 * s.error:+.2f}%"
        rows.append((p.label, str(p.devices), str(s.pes), f"{s.bandwidth_bytes_per_cycle:.2f}",
                     str(s.height), figure(s.compute_ops_per_cycle, ".2f"),
                     figure(s.io_ops_per_cycle, ".2f"), figure(s.port_ops_per_cycle, ".2f"),
                     figure(s.predicted_ops_per_cycle, ".2f"),
                     figure(s.simulated_ops_per_cycle, ".2f"), error))
    return _format(head, rows, {"design point"})


def _confirm(roofline, out, *, quiet, engine=None):
    """Synthesize and simulate the best point's system of SC PEs, print the comparison, write
    confirm.json."""
    best = roofline.best()
    if best is None:
        raise HwgenError("--confirm: no design point is placed, so there is no best point")
    # Place and route the system when the roofline measured its figures by the tools; with
    # estimated resources at the board's clock it is synthesized only (a large system takes
    # nextpnr long), and the clock it attains at is the roofline's, stated.
    place = roofline.options["resources"] == "synth" or roofline.options["clock"] == "fmax"
    found = confirm_point(best, roofline.board, progress=not quiet, engine=engine, place=place)
    write_files({out / "confirm.json": json.dumps(
        {"tool_versions": tool_versions(), **found.to_json()}, indent=2) + "\n"})
    verdict = "fits" if found.fits else "DOES NOT FIT (" + ", ".join(
        f"{r.upper()} {found.synthesized[r]:,} > {found.available[r]:,}" for r in found.over) + ")"
    print(f"confirm: {found.label}, a system of SC = {found.pes} PEs on one "
          f"{roofline.board.device}, synthesized: {verdict}")
    rows = []
    for r in ("lut", "ff", "bram", "dsp"):
        error = found.error(r)
        rows.append((r.upper(), f"{found.predicted[r]:,}", f"{found.synthesized[r]:,}",
                     NOT_AVAILABLE if error is None else f"{100 * error:+.1f}%",
                     f"{found.available[r]:,}"))
    for line in _format(("resource", "model SC x PE", "synthesized", "error", "device"), rows,
                        {"resource"}):
        print(f"  {line}")
    fmax = NOT_AVAILABLE if found.fmax_mhz is None else f"{found.fmax_mhz:.1f} MHz"
    print(f"  Fmax {fmax} ({found.fmax_source})")
    sim = found.simulated
    error = NOT_AVAILABLE if found.attained_error is None else f"{100 * found.attained_error:+.1f}%"
    print(f"  attainable {figure(found.attainable_gbops, '.3f')} GBops/s (the roofline, at "
          f"{found.attainable_clock_mhz:g} MHz); attained {figure(found.attained_gbops, '.3f')} "
          f"GBops/s ({error}) = {sim['ops_per_cycle']:.2f} ops/cycle simulated ({sim['channels']} "
          f"channel(s), {sim['width']}x{sim['height']} frames, "
          f"{sim['bandwidth_bytes_per_cycle']:.2f} B/cycle) x {found.attained_clock_mhz:.1f} MHz, "
          f"{found.attained_clock_source}")
    print(f"  wrote {out / 'confirm.json'}")


def run_sweep(args, *, ranked):
    """Run ``roofline`` (``ranked=False``) or ``explore`` (``ranked=True``)."""
    parsed = _parse(args)
    engine = engine_from_args(args, quiet=args.quiet)
    with (nullcontext() if parsed["scheduler"] is None
          else Cluster(parsed["scheduler"])) as cluster:
        roofline = build_roofline(
            parsed["points"], parsed["board"], devices=parsed["devices"],
            resources=args.resources, clock=parsed["clock"], link=args.link, pes=args.pes,
            ceiling_clocks_mhz=parsed["ceiling_clocks_mhz"], jobs=args.jobs,
            progress=not args.quiet, engine=engine, cluster=cluster)
    page = report_file(args, roofline.to_json(), str(parsed["out"] / "roofline.json"))
    write_outputs(roofline, parsed["out"])
    write_files(page)
    if not args.quiet:
        first = roofline.points[0]
        frame = first.measurement.frame
        print(f"{roofline.kernel} on {roofline.board.name}: {len(parsed['points'])} design points "
              f"x {len(roofline.device_counts)} device count(s), {frame.width}x{frame.height} "
              f"frames; clock {first.clock_source.split(' (')[0]}, resources "
              f"{first.measurement.resources_source}")
        if roofline.scaled:
            heights = sorted({h for p in roofline.points if p.measurement.frame.scaled
                              for h in p.measurement.frame.simulated_heights})
            print(f"  figures scaled to the full frame from simulations of short frames "
                  f"({', '.join(map(str, heights))} rows)")
        shown = roofline.ranked() if ranked else roofline.points
        if ranked and args.top:
            shown = shown[:args.top]
        print("  GBops/s; CI in ops/byte; resources per PE; SC = PEs per FPGA")
        for line in _table(shown, ranked):
            print(f"  {line}")
        if args.pes is not None:
            print(f"system of {args.pes} PEs sharing the bounding link, simulated vs "
                  f"min(P x perf_PE, CI x BW, the memory channels' beats per cycle) "
                  f"(ops/cycle, on frames of the rows shown):")
            for line in _system_table(roofline):
                print(f"  {line}")
    for line in why(roofline):
        print(line)
    if getattr(args, "confirm", False):
        _confirm(roofline, parsed["out"], quiet=args.quiet, engine=engine)
    unmodelled = [p for p in roofline.points if p.devices == roofline.device_counts[0]
                  and p.measurement.resources_unmodelled]
    if unmodelled and not args.quiet:
        print("resources per PE leave out:")
        for p in unmodelled:
            print(f"  {p.label}: {_unmodelled(p.measurement)}")
    if not args.quiet:
        written = [*(parsed["out"] / name for name in OUTPUTS), *page]
        print(f"wrote {', '.join(map(str, written))}")
    suspect = list(dict.fromkeys(p.label for p in roofline.suspect))
    if suspect:
        raise SuspectMeasurement(
            f"{len(suspect)} design point(s) measured with saturated HMM counters, their figures "
            f"are lower bounds: {', '.join(suspect)} (see 'saturated' in points.csv)")
    return 0


# -- programs ------------------------------------------------------------------------------------

def _program_roofline_input(args):
    """``(kind, points, host, parsed)`` of ``roofline PROGRAM``, every option checked."""
    refuse_options(args, KERNEL_GRID, "to a kernel")
    if args.pes is not None:
        raise HwgenError(f"--pes simulates systems of window filters, not {args.kernel}'s "
                         f"pipeline: leave --pes out")
    kind = PROGRAMS.get_or_error(args.kernel)
    parsed = _parse_common(args, kind.name)
    launch_delay = (HostModel().launch_delay_cycles if args.launch_delay is None
                    else args.launch_delay)
    if launch_delay < 0:
        raise HwgenError(f"--launch-delay must be an integer >= 0, not {launch_delay}")
    try:
        jobs = program_jobs(kind, program_grid(args, kind), name=args.kernel)
    except (TypeError, ValueError) as error:
        raise option_error(error, kind) from None
    return (kind, program_points(args.kernel, jobs), HostModel(launch_delay_cycles=launch_delay),
            parsed)


def run_program_roofline(args):
    """``roofline PROGRAM``: every job of the program's options' grid placed on the roofline
    from the cycle model and the estimate (:mod:`hwgen.roofline.program`)."""
    kind, points, host, parsed = _program_roofline_input(args)
    engine = engine_from_args(args, quiet=args.quiet)
    with (nullcontext() if parsed["scheduler"] is None
          else Cluster(parsed["scheduler"])) as cluster:
        roofline = build_program_roofline(
            points, parsed["board"], devices=parsed["devices"], resources=args.resources,
            clock=parsed["clock"], link=args.link,
            ceiling_clocks_mhz=parsed["ceiling_clocks_mhz"], host=host, jobs=args.jobs,
            progress=not args.quiet, engine=engine, cluster=cluster)
    out = parsed["out"]
    page = report_file(args, roofline.to_json(), str(out / "roofline.json"))
    write_outputs(roofline, out)
    write_files(page)
    if not args.quiet:
        first = roofline.points[0]
        print(f"{kind.name} on {roofline.board.name}: {len(points)} design points x "
              f"{len(roofline.device_counts)} device count(s), {first.measurement.point.problem}; "
              f"clock {first.clock_source.split(' (')[0]}, host launch delay "
              f"{host.launch_delay_cycles} cycles")
        print("  one pipeline is one PE: ops/cycle from the cycle model with an ideal memory, "
              "CI from the job's traffic, SC from the pipeline's estimate")
        print("  GBops/s; CI in ops/byte; resources per pipeline; SC = pipelines per FPGA")
        for line in _table(roofline.points, False):
            print(f"  {line}")
    for line in why(roofline):
        print(line)
    suspect = [p.label for p in roofline.suspect]
    if args.confirm:
        suspect += _confirm_program(roofline, out, host, quiet=args.quiet, engine=engine)
    if not args.quiet:
        print(f"wrote {', '.join(map(str, [*(out / name for name in OUTPUTS), *page]))}")
    if suspect:
        raise SuspectMeasurement("; ".join(dict.fromkeys(suspect)))
    return 0


def _confirm_program(roofline, out, host, *, quiet, engine):
    """Simulate the best point's job against the roofline's figures, print the comparison and
    write confirm.json: the reasons the figures are suspect (traffic or ops that differ from
    the simulation's, saturated HMM values)."""
    best = roofline.best()
    if best is None:
        raise HwgenError("--confirm: no design point is placed, so there is no best point")
    found = confirm_program(best, host=host, engine=engine)
    write_files({out / "confirm.json": json.dumps(
        {"tool_versions": tool_versions(), **found.to_json()}, indent=2) + "\n"})
    print(f"confirm: {found.label}, its job simulated ({found.engine['name']}) with the ideal "
          f"memory the roofline assumes")
    rows = []
    for name in ("cycles", "ops", "bytes_read", "bytes_written"):
        error = found.error(name)
        rows.append((name, f"{found.modelled[name]:,.0f}", f"{found.simulated[name]:,}",
                     NOT_AVAILABLE if error is None else f"{100 * error:+.1f}%"))
    for line in _format(("figure", "roofline", "simulated", "error"), rows, {"figure"}):
        print(f"  {line}")
    print(f"  wrote {out / 'confirm.json'}")
    reasons = [f"{best.label}: the simulation's {name} differ from the roofline's"
               for name in ("ops", "bytes_read", "bytes_written") if found.error(name)]
    if found.saturated:
        reasons.append(f"{best.label}: HMM values saturated in the confirming simulation: "
                       f"{', '.join(found.saturated)}")
    return reasons
