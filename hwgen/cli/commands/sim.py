"""``hwgen sim``: simulate a kernel against the memory model."""

import gc
import json
import math
import os
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from amaranth.hdl import UnusedElaboratable

from ...sim import (check_image, instrument_pe, run_window_filter, run_window_system,
                    window_system)

from ...errors import HwgenError, SuspectMeasurement
from ..figures import figure
from ..imageio import IMAGE_SUFFIXES, encode_image, read_image
from ...catalog import (KERNELS, KernelInfo, design_name, design_title, resolve_board,
                        system_of)
from ..options import (add_board_option, add_engine_option, add_instrument_option,
                       add_json_option, add_kernel_options, add_link_option, add_memory_options,
                       add_option, add_output_option, add_quiet_option, engine_from_args,
                       engine_line, memory_from_args, simulation_seconds,
                       window_filter_from_args, DEFAULT_IMAGE_SIDE)
from ..outputs import check_file_option, staged_file, write_files
from ..report import add_report_option, check_report_option, report_file
from ...progress import Progress
from ...records import SimResult
from ...traces.timeline import Timeline
from ..traces import add_drain_option, add_trace_options, check_trace_options, trace_files

__all__ = ["add_options", "run"]


def add_system_options(parser):
    group = parser.add_argument_group("system of PEs")
    add_option(group, "--pes", type=int, default=1, metavar="P",
               help="PEs, each filtering its own frame, that share the memory")
    add_board_option(group, default=None,
                     help="set the memory's bandwidth to a link of this board: its GB/s over "
                          "the clock")
    add_link_option(group, shown="the tightest at --devices")
    add_option(group, "--devices", type=int, default=1, metavar="D",
               help="devices of the board whose link bandwidth the PEs share")
    add_option(group, "--clock", type=float, default=None, metavar="MHZ",
               help="clock that turns the link's GB/s into bytes per cycle", shown="the board's")


DESCRIPTION = ("Simulate a window-filter PE, or a system of PEs that share one memory, "
               "cycle by cycle against a memory model (compiled to C++ with CXXRTL, or in "
               "Amaranth's simulator: see --engine), and check the output image against a "
               "numpy model of the filter.")


def add_options(parser):
    add_kernel_options(parser, image=True)
    add_option(parser, "--input", metavar="IMG", default=None,
               help="input image: a .npy 2-D integer array, or an 8- or 16-bit greyscale PNG or "
                    "PGM", shown="a seeded random W x H image")
    add_output_option(parser, "--output", "OUT",
                      "the output image: .npy (uint8 up to 8-bit pixels, else uint16), or an 8- "
                      "or 16-bit greyscale .png or .pgm", ".png")
    add_json_option(parser, "the run's figures")
    add_report_option(parser)
    add_output_option(parser, "--vcd", "FILE",
                      "a waveform (with the HMM's signals when instrumented)", ".vcd")
    add_instrument_option(parser)
    group = add_trace_options(parser)
    add_option(group, "--timeline-depth", type=int, default=4096, metavar="RECORDS",
               help="records of the HMM's timeline of FSM states and stream categories, a power "
                    "of two; made only for --paraver or --perfetto")
    add_drain_option(group, default=64, what="the timeline", running="the kernel runs")
    add_memory_options(parser, seeded="the random input image")
    add_system_options(parser)
    add_engine_option(parser)
    add_quiet_option(parser)


def _timeline_options(args):
    """``(timeline depth, drain interval)`` for a traced run; checks the options."""
    if not args.instrument:
        raise HwgenError("--paraver and --perfetto export what the HMM records: drop "
                         "--no-instrument")
    depth = args.timeline_depth
    if depth < 1 or depth & (depth - 1):
        raise HwgenError(f"--timeline-depth must be a power of two, not {depth}")
    if args.drain_interval < 0:
        raise HwgenError(f"--drain-interval must be an integer >= 0, not {args.drain_interval}")
    return depth, args.drain_interval or None


def _link_memory(args, memory):
    """``memory`` with a board link's bandwidth when ``--board`` names one."""
    if args.board is None:
        for option, value in (("--link", args.link), ("--clock", args.clock)):
            if value is not None:
                raise HwgenError(f"{option} needs --board")
        return memory, None
    if args.mem_bandwidth is not None:
        raise HwgenError("give --mem-bandwidth or --board, not both")
    board = resolve_board(args.board)
    if args.clock is not None and not args.clock > 0:
        raise HwgenError(f"--clock must be a positive number of MHz, not {args.clock:g}")
    clock = board.clock_mhz if args.clock is None else args.clock
    from ...roofline.model import bounding_link, bytes_per_cycle   # the roofline's flow, for --board

    link, gbps = bounding_link(board, args.devices, args.link)
    memory = replace(memory, bandwidth_bytes_per_cycle=bytes_per_cycle(gbps, clock))
    return memory, f"{link.name} of {board.name}, {gbps:g} GB/s at {clock:g} MHz"


def _system(args, shape, board, memory):
    """``args.pes`` PEs of the options' parameters, addressable side by side, with memory
    channels for ``memory``'s bandwidth (one per PE when it is unlimited)."""
    if not isinstance(KERNELS.get_or_error(args.kernel), KernelInfo):
        with warnings.catch_warnings():
            # The first PE only checks the options and gives their values.
            warnings.simplefilter("ignore", UnusedElaboratable)
            template = window_filter_from_args(args, shape, board=board)
            if template.traffic() is None:
                raise HwgenError(f"--pes runs systems of PEs that state their closed-form "
                                 f"traffic (it bounds the run); {type(template).name}'s "
                                 f"traffic() is None: leave --pes out")
            system = system_of(template, args.pes, memory.bandwidth_bytes_per_cycle)
            del template
            gc.collect()
        return system
    with warnings.catch_warnings():
        # The first filter only checks the options and gives the parameters.
        warnings.simplefilter("ignore", UnusedElaboratable)
        p = window_filter_from_args(args, shape, board=board).parameters()
        gc.collect()
    mask = p["mask"] if p["mask"] != "custom" else np.array(p["mask_array"])
    return window_system(args.pes, width=p["width"], height=p["height"], op=p["op"],
                         size=(p["rows"], p["cols"]), mask=mask, pixel_bits=p["pixel_bits"],
                         unroll=p["unroll"], buffer=p["buffer"], pipeline=p["pipeline"],
                         tree_stages=p["tree_stages"], credits=p["credits"],
                         bytes_per_cycle=memory.bandwidth_bytes_per_cycle)


#: Memory one pixel of a simulated frame takes at the peak of a run (the input, the memory
#: model, the output, the numpy model's output and the comparison): 39 B measured (peak RSS of
#: 512x512 to 4096x4096 frames, both engines' shares alike), with a margin.
BYTES_PER_PIXEL = 48


def available_memory():
    """Bytes of memory this process can use now: the kernel's estimate (``MemAvailable``) where
    it gives one, else the machine's physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _size(count):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:.3g} {unit}" if unit != "B" else f"{count} B"
        count /= 1024


def check_fits(width, height, pes, available=None):
    """Refuse, before any work, frames whose simulation cannot fit in memory, naming the
    largest square frame that does."""
    available = available_memory() if available is None else available
    need = width * height * pes * BYTES_PER_PIXEL
    if need <= available:
        return
    side = math.isqrt(available // (BYTES_PER_PIXEL * pes))
    frames = f"{pes} frames of " if pes > 1 else "a frame of "
    raise HwgenError(f"--width {width} x --height {height}: simulating {frames}{width} x "
                     f"{height} pixels needs about {_size(need)} of memory and "
                     f"{_size(available)} is available; the largest square frame that fits is "
                     f"about {side}x{side}")


def model_check(pe, images, outputs):
    """``None`` when every output image equals the numpy model's, else what differs."""
    for index, (image, output) in enumerate(zip(images, outputs)):
        expected = pe.reference(image)
        wrong = np.argwhere(output != expected)
        if len(wrong):
            (row, col), where = wrong[0], f"PE {index}: " if len(images) > 1 else ""
            return (f"{where}{len(wrong)} of {expected.size} output pixels differ from the "
                    f"numpy model, the first at row {row}, column {col}: {output[row, col]} "
                    f"instead of {expected[row, col]}")
    return None


def run(args):
    for option, path in (("--output", args.output), ("--json", args.json), ("--vcd", args.vcd)):
        check_file_option(option, path)
    check_report_option(args)
    tracing = check_trace_options(args)
    if tracing:
        timeline_depth, drain_interval = _timeline_options(args)
    if args.output and Path(args.output).suffix.lower() not in IMAGE_SUFFIXES:
        raise HwgenError(f"--output must end in {', '.join(IMAGE_SUFFIXES)}, not "
                         f"{Path(args.output).name!r}")
    if args.pes < 1:
        raise HwgenError(f"--pes must be a positive integer, not {args.pes}")
    if args.pes > 1 and args.output:
        raise HwgenError(f"--output writes one image; with --pes {args.pes} leave it out")
    if args.pes > 1 and tracing:
        raise HwgenError(f"--paraver and --perfetto trace one PE; with --pes {args.pes} leave "
                         f"them out")
    memory, link = _link_memory(args, memory_from_args(args))
    engine = engine_from_args(args, quiet=args.quiet)
    board = None if args.board is None else resolve_board(args.board)
    if not args.input:
        check_fits(*(DEFAULT_IMAGE_SIDE if side is None else side
                     for side in (args.width, args.height)), args.pes)
    image = read_image(args.input) if args.input else None
    shape = None if image is None else image.shape
    if image is not None:
        check_fits(shape[1], shape[0], args.pes)
    system = None if args.pes == 1 else _system(args, shape, board, memory)
    pe = window_filter_from_args(args, shape, board=board) if system is None else system.pes[0]
    if image is None:
        rng = np.random.default_rng(args.seed)
        images = [rng.integers(0, 1 << pe.pixel_bits, size=(pe.height, pe.width))
                  for _ in range(args.pes)]
    else:
        images = [image] * args.pes
    try:
        images = [check_image(frame, pe) for frame in images]
    except ValueError as error:
        raise HwgenError(f"--input: {error} (--pixel-bits sets the pixel width)") from None
    design, drain = pe, None
    if tracing:
        design, drain = instrument_pe(pe, timeline_depth=timeline_depth), drain_interval
    ideal = pe.ideal_cycles() if hasattr(pe, "ideal_cycles") else None
    with (Progress("simulating", total=ideal, unit="cycle",
                   enabled=not args.quiet) as bar,
          staged_file(args.vcd) as vcd):
        started = time.perf_counter()
        if system is None:
            result = run_window_filter(design, images[0], memory=memory, vcd=vcd,
                                       instrument=args.instrument, drain_interval_cycles=drain,
                                       progress=bar.update_to, engine=engine)
            per_pe, outputs, engine_info = [result.figures], [result.image], result.engine
        else:
            system = run_window_system(system, images, memory=memory, vcd=vcd,
                                       instrument=args.instrument, progress=bar.update_to,
                                       engine=engine)
            per_pe, outputs, engine_info = system.per_pe or [], system.images, system.engine
        elapsed = simulation_seconds(engine_info, time.perf_counter() - started)

    figures = per_pe[0] if per_pe else system.figures
    model = pe.traffic()
    # A PE without closed-form traffic has no fetch model to hold its traffic against (n/a);
    # a saturated byte count may leave the check open (None) where it cannot refute it.
    checks = [] if model is None else [f.traffic_matches(model.bytes_read, model.bytes_written)
                                       for f in per_pe]
    if system is not None and model is not None:
        checks.append(system.figures.traffic_matches(args.pes * model.bytes_read,
                                                     args.pes * model.bytes_written))
    matches = False if False in checks else None if None in checks or not checks else True
    mismatch = model_check(pe, images, outputs)
    suspect = _suspect(per_pe, matches, mismatch)
    files = {}
    if tracing:
        timeline = Timeline.from_readout(design_title(args.kernel, pe), figures.hmm, design.layout)
        files.update(trace_files(args, timeline, design_name(args.kernel, pe)))
        dropped = figures.hmm["timeline.dropped"]
        if dropped:
            suspect.append(f"the HMM dropped {dropped} timeline records (drain more often with "
                           f"--drain-interval, or deepen --timeline-depth)")
    record = SimResult(kernel=args.kernel, title=design_title(args.kernel, pe),
                       parameters=pe.parameters(), memory=memory, link=link,
                       input=args.input or f"random (seed {args.seed})", figures=figures,
                       fetch_model=model, fetch_model_matches=matches,
                       result_matches_numpy_model=mismatch is None, engine=engine_info,
                       suspect=tuple(suspect), simulation_seconds=elapsed,
                       system=None if system is None else system.to_json(),
                       trace_files=tuple(map(str, files)) if tracing else None)
    report = record.to_json()
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    files.update(report_file(args, report, args.json or "this hwgen sim run"))
    if args.output:
        files[Path(args.output)] = encode_image(args.output, outputs[0], pe.pixel_bits)
    write_files(files)
    if not args.quiet:
        title = design_title(args.kernel, pe)
        verdict = {True: "matches", False: "DOES NOT MATCH",
                   None: "n/a (the PE states none)" if model is None else
                   "cannot be checked (its byte counts saturated)"}[matches]
        result_verdict = "matches" if mismatch is None else "DOES NOT MATCH"
        if link is not None:
            print(f"memory: {memory.bandwidth_bytes_per_cycle:.3f} B/cycle, the {link}")
        if system is not None:
            channels = system.channels
            print(f"{title}: {args.pes} PEs sharing the memory through {channels} channel"
                  f"{'s' * (channels > 1)} of one beat each way per cycle, "
                  f"{system.cycles} cycles "
                  f"({figure(system.ops_per_cycle)} ops/cycle, {figure(system.bytes_per_cycle)} "
                  f"B/cycle); "
                  f"every result {result_verdict} the numpy model")
            print(f"  read {system.bytes_read} B, wrote {system.bytes_written} B, ops "
                  f"{system.ops}, CI {figure(system.ci)} ops/byte; fetch model {verdict} for every "
                  f"PE")
        for index, pe_figures in enumerate(per_pe):
            if system is not None:
                name, indent, notes = f"PE {index}", "  ", ("", "")
            else:
                name, indent = title, ""
                notes = f"; result {result_verdict} the numpy model", f"; fetch model {verdict}"
            for line in _figure_lines(name, pe_figures, notes):
                print(f"{indent}{line}")
        if tracing:
            timeline = report["timeline"]
            dropped = timeline["records_dropped"]
            print(f"  timeline: {timeline['records']} records of FSM states and stream categories"
                  + (f", {dropped} DROPPED (drain faster or deepen --timeline-depth)"
                     if dropped else ""))
            if args.drain_interval:
                print(f"  cycles around the job: the host reads the HMM out after its drain and "
                      f"{args.drain_interval}-cycle wait, not after its 16-cycle poll as "
                      f"untraced; the job's own are the same")
        for path in [*files, *([args.vcd] if args.vcd else [])]:
            print(f"  wrote {path}")
        cycles = figures.cycles if system is None else system.cycles
        print(f"  {engine_line(engine_info, elapsed, cycles)}"
              + ("" if system is None else " of the system"))
    if suspect:
        raise SuspectMeasurement("; ".join(suspect))
    return 0


def _figure_lines(name, figures, notes=("", "")):
    """The lines of one PE's figures; ``notes`` end its first two lines."""
    lines = [f"{name}: {figures.cycles} cycles ({figure(figures.outputs_per_cycle)} "
             f"outputs/cycle, {figure(figures.ops_per_cycle)} ops/cycle){notes[0]}",
             f"  read {figures.bytes_read} B, wrote {figures.bytes_written} B, ops {figures.ops}, "
             f"CI {figure(figures.ci)} ops/byte{notes[1]}"]
    if figures.hmm is not None:
        lines += [f"  {line}" for line in hmm_summary(figures)]
    return lines


def _suspect(per_pe, matches, mismatch):
    """Why the run's figures cannot be trusted as they stand, if they cannot."""
    reasons = [] if matches in (True, None) else [
        "the traffic measured does not match the fetch model"]
    if mismatch is not None:
        reasons.append(mismatch)
    saturated = [f"PE {i}: {name}" if len(per_pe) > 1 else name
                 for i, f in enumerate(per_pe) for name in f.saturated]
    if saturated:
        reasons.append(f"HMM values saturated, their figures are lower bounds: "
                       f"{', '.join(saturated)}")
    return reasons


def hmm_summary(figures):
    """A few lines on what the HMM measured."""
    hmm = figures.hmm
    outside = figures.total_cycles - figures.cycles
    lines = [f"HMM: {figures.total_cycles} cycles observed: the job's {figures.cycles} + {outside} "
             f"around it, before start and until the host read the HMM out (IDLE, idle)",
             f"cycles waiting for a read request {figures.rd_req_wait_cycles}, for read data "
             f"{figures.rd_data_wait_cycles}, for a write {figures.wr_req_wait_cycles}"]
    for fsm, states in hmm.fsms().items():
        lines.append(f"{fsm}: " + ", ".join(f"{state} {n}" for state, n in states.items()))
    for stream, counts in hmm.streams().items():
        lines.append(f"{stream}: " + ", ".join(f"{c} {n}" for c, n in counts.items()))
    for name, histogram in hmm.histograms().items():
        if histogram["count"]:
            lines.append(f"{name}: {histogram['count']} samples, min {histogram['min']}, "
                         f"mean {histogram['sum'] / histogram['count']:.2f}, "
                         f"max {histogram['max']}")
    if hmm.saturated:
        lines.append(f"SATURATED (lower bounds): {', '.join(hmm.saturated)}")
    return lines
