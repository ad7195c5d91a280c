"""``hwgen sim``: run a kernel in Amaranth's simulator against the memory model."""

import gc
import json
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from amaranth.hdl import UnusedElaboratable
from tqdm import tqdm

from ...sim import (MemoryModel, check_image, instrument_pe, run_window_filter,
                 run_window_system, window_system)

from ...errors import HwgenError, SuspectMeasurement
from ..figures import figure
from ..imageio import read_image
from ...catalog import design_name, resolve_board
from ..options import add_kernel_options, window_filter_from_args
from ..outputs import check_file_option, write_files
from ...roofline.model import bounding_link, bytes_per_cycle
from ...traces.timeline import Timeline
from ..traces import add_trace_options, check_trace_options, trace_files
from ...versions import tool_versions
from .build import add_instrument_option

__all__ = ["register", "add_memory_options", "memory_from_args"]


def add_memory_options(parser):
    group = parser.add_argument_group("memory model")
    group.add_argument("--mem-bandwidth", type=float, default=None, metavar="BYTES_PER_CYCLE",
                       help="read + write bandwidth in bytes per cycle, fractions allowed "
                            "(default: unlimited)")
    group.add_argument("--mem-latency", type=int, default=1, metavar="CYCLES",
                       help="cycles from a read request to its response (default: %(default)s)")
    group.add_argument("--mem-jitter", type=int, default=0, metavar="CYCLES",
                       help="extra random latency 0..CYCLES per response (default: %(default)s)")
    group.add_argument("--mem-backpressure", type=float, default=0.0, metavar="P",
                       help="probability a port stalls in a cycle (default: %(default)s)")
    group.add_argument("--seed", type=int, default=0,
                       help="seed of the random image and the memory's randomness (default: %(default)s)")


_MEMORY_OPTIONS = {
    "bandwidth_bytes_per_cycle": "--mem-bandwidth", "latency_cycles": "--mem-latency",
    "jitter_cycles": "--mem-jitter", "backpressure": "--mem-backpressure",
}


def memory_from_args(args):
    try:
        return MemoryModel(bandwidth_bytes_per_cycle=args.mem_bandwidth,
                           latency_cycles=args.mem_latency, jitter_cycles=args.mem_jitter,
                           backpressure=args.mem_backpressure, seed=args.seed)
    except ValueError as error:
        message = str(error)
        for field, option in _MEMORY_OPTIONS.items():
            message = message.replace(field, option)
        raise HwgenError(message) from None


def add_system_options(parser):
    group = parser.add_argument_group("system of PEs")
    group.add_argument("--pes", type=int, default=1, metavar="P",
                       help="PEs, each filtering its own frame, that share the memory "
                            "(default: %(default)s)")
    group.add_argument("--board", default=None, metavar="B",
                       help="set the memory's bandwidth to a link of this board (a built-in "
                            "board or a board file): its GB/s over the clock (default: none)")
    group.add_argument("--link", default=None, metavar="NAME",
                       help="the board's link, by name or a unique part of it (default: the "
                            "tightest at --devices)")
    group.add_argument("--devices", type=int, default=1, metavar="D",
                       help="devices of the board whose link bandwidth the PEs share "
                            "(default: %(default)s)")
    group.add_argument("--clock", type=float, default=None, metavar="MHZ",
                       help="clock that turns the link's GB/s into bytes per cycle (default: "
                            "the board's)")


def register(subparsers):
    parser = subparsers.add_parser(
        "sim", help="simulate a kernel on an image and report its figures",
        description="Simulate a window-filter PE, or a system of PEs that share one memory, in "
                    "Amaranth's simulator against a memory model.")
    add_kernel_options(parser)
    parser.add_argument("--input", metavar="IMG", default=None,
                        help="input image: .npy 2-D integer array or 8-bit grey PNG/PGM "
                             "(default: a seeded random W x H image)")
    parser.add_argument("--output", metavar="OUT.npy", default=None,
                        help="write the output image (.npy, or .png/.pgm for 8/16-bit pixels)")
    parser.add_argument("--json", metavar="FILE", default=None, help="write the run's figures as JSON")
    parser.add_argument("--vcd", metavar="FILE", default=None,
                        help="write a waveform (with the HMM's signals when instrumented)")
    add_instrument_option(parser)
    group = add_trace_options(parser)
    group.add_argument("--timeline-depth", type=int, default=4096, metavar="RECORDS",
                       help="records of the HMM's timeline of FSM states and stream categories, "
                            "a power of two; made only for --paraver or --perfetto "
                            "(default: %(default)s)")
    group.add_argument("--drain-interval", type=int, default=64, metavar="CYCLES",
                       help="cycles the host waits between drains of the timeline while the "
                            "kernel runs; 0: read it only at the end, so records that do not fit "
                            "are dropped (default: %(default)s)")
    add_memory_options(parser)
    add_system_options(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    parser.set_defaults(func=run)


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


def _write_image(path, image, pixel_bits):
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        np.save(path, image)
    elif suffix in (".png", ".pgm"):
        from PIL import Image
        mode, dtype = ("L", np.uint8) if pixel_bits <= 8 else ("I;16", np.uint16)
        Image.fromarray(image.astype(dtype), mode=mode).save(path)
    else:
        raise HwgenError(f"--output must end in .npy, .png or .pgm, not {path.name!r}")


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
    link, gbps = bounding_link(board, args.devices, args.link)
    memory = replace(memory, bandwidth_bytes_per_cycle=bytes_per_cycle(gbps, clock))
    return memory, f"{link.name} of {board.name}, {gbps:g} GB/s at {clock:g} MHz"


def _system(args, shape, board):
    """``args.pes`` PEs of the options' parameters, addressable side by side."""
    with warnings.catch_warnings():
        # The first filter only checks the options and gives the parameters.
        warnings.simplefilter("ignore", UnusedElaboratable)
        p = window_filter_from_args(args, shape, board=board).parameters()
        gc.collect()
    mask = p["mask"] if p["mask"] != "custom" else np.array(p["mask_array"])
    return window_system(args.pes, width=p["width"], height=p["height"], op=p["op"],
                         size=(p["rows"], p["cols"]), mask=mask, pixel_bits=p["pixel_bits"],
                         unroll=p["unroll"], buffer=p["buffer"], pipeline=p["pipeline"],
                         tree_stages=p["tree_stages"], credits=p["credits"])


def run(args):
    for option, path in (("--output", args.output), ("--json", args.json), ("--vcd", args.vcd)):
        check_file_option(option, path)
    tracing = check_trace_options(args)
    if tracing:
        timeline_depth, drain_interval = _timeline_options(args)
    if args.output and Path(args.output).suffix.lower() not in (".npy", ".png", ".pgm"):
        raise HwgenError(f"--output must end in .npy, .png or .pgm, not {Path(args.output).name!r}")
    if args.pes < 1:
        raise HwgenError(f"--pes must be a positive integer, not {args.pes}")
    if args.pes > 1 and args.output:
        raise HwgenError(f"--output writes one image; with --pes {args.pes} leave it out")
    if args.pes > 1 and tracing:
        raise HwgenError(f"--paraver and --perfetto trace one PE; with --pes {args.pes} leave "
                         f"them out")
    memory, link = _link_memory(args, memory_from_args(args))
    board = None if args.board is None else resolve_board(args.board)
    image = read_image(args.input) if args.input else None
    shape = None if image is None else image.shape
    pes = ([window_filter_from_args(args, shape, board=board)] if args.pes == 1
           else _system(args, shape, board))
    pe = pes[0]
    if image is None:
        rng = np.random.default_rng(args.seed)
        images = [rng.integers(0, 1 << pe.pixel_bits, size=(pe.height, pe.width)) for _ in pes]
    else:
        images = [image] * len(pes)
    try:
        images = [check_image(frame, pe) for frame in images]
    except ValueError as error:
        raise HwgenError(f"--input: {error}") from None
    design, drain = pe, None
    if tracing:
        design, drain = instrument_pe(pe, timeline_depth=timeline_depth), drain_interval
    with tqdm(total=pe.ideal_cycles(), unit="cycle", unit_scale=True, disable=args.quiet,
              leave=False, desc="simulating") as bar:
        started = time.perf_counter()
        progress = lambda cycles: bar.update(cycles - bar.n)
        if len(pes) == 1:
            result = run_window_filter(design, images[0], memory=memory, vcd=args.vcd,
                                       instrument=args.instrument, drain_interval_cycles=drain,
                                       progress=progress)
            per_pe = [result.figures]
        else:
            system = run_window_system(pes, images, memory=memory, vcd=args.vcd,
                                       instrument=args.instrument, progress=progress)
            per_pe = system.per_pe
        elapsed = time.perf_counter() - started

    figures = per_pe[0]
    model = pe.traffic()
    matches = all(f.bytes_read == model.bytes_read and f.bytes_written == model.bytes_written
                  for f in per_pe)
    suspect = _suspect(per_pe, matches)
    report = {
        "tool_versions": tool_versions(),
        "kernel": args.kernel,
        "parameters": pe.parameters(),
        "memory": memory.to_json(),
        "link": link,
        "input": args.input or f"random (seed {args.seed})",
        **figures.to_json(),
        "fetch_model": model.to_json(),
        "fetch_model_matches": matches,
        "suspect": suspect,
        "simulation_seconds": elapsed,
    }
    if len(pes) > 1:
        report["system"] = system.to_json()
    files = {}
    if tracing:
        timeline = Timeline.from_readout(_title(args.kernel, pe), figures.hmm, design.layout)
        files.update(trace_files(args, timeline, design_name(args.kernel, pe)))
        report["timeline"] = {"records": len(figures.hmm.traces["timeline"]),
                              "records_dropped": figures.hmm["timeline.dropped"],
                              "time_unit": "clock cycle, counted by the HMM from its start",
                              "files": sorted(str(path) for path in files)}
    if args.json:
        files[Path(args.json)] = json.dumps(report, indent=2) + "\n"
    write_files(files)
    if args.output:
        _write_image(args.output, result.image, pe.pixel_bits)
    if not args.quiet:
        title = _title(args.kernel, pe)
        verdict = "matches" if matches else "DOES NOT MATCH"
        if link is not None:
            print(f"memory: {memory.bandwidth_bytes_per_cycle:.3f} B/cycle, the {link}")
        if len(pes) > 1:
            print(f"{title}: {len(pes)} PEs sharing the memory, {system.cycles} cycles "
                  f"({figure(system.ops_per_cycle)} ops/cycle, {figure(system.bytes_per_cycle)} "
                  f"B/cycle)")
            print(f"  read {system.bytes_read} B, wrote {system.bytes_written} B, ops "
                  f"{system.ops}, CI {figure(system.ci)} ops/byte; fetch model {verdict} for "
                  f"every PE")
            name, indent, model_note = "PE 0", "  ", ""
        else:
            name, indent, model_note = title, "", f"; fetch model {verdict}"
        print(f"{indent}{name}: {figures.cycles} cycles ({figure(figures.outputs_per_cycle)} "
              f"outputs/cycle, {figure(figures.ops_per_cycle)} ops/cycle)")
        print(f"{indent}  read {figures.bytes_read} B, wrote {figures.bytes_written} B, ops "
              f"{figures.ops}, CI {figure(figures.ci)} ops/byte{model_note}")
        if figures.hmm is not None:
            for line in hmm_summary(figures):
                print(f"{indent}  {line}")
        if tracing:
            timeline = report["timeline"]
            dropped = timeline["records_dropped"]
            print(f"  timeline: {timeline['records']} records of FSM states and stream categories"
                  + (f", {dropped} DROPPED (drain faster or deepen --timeline-depth)"
                     if dropped else ""))
            for path in timeline["files"]:
                print(f"  wrote {path}")
        print(f"  simulated in {elapsed:.1f} s ({sum(f.cycles for f in per_pe) / elapsed:.0f} "
              f"PE cycles/s)")
    if suspect:
        raise SuspectMeasurement("; ".join(suspect))
    return 0


def _suspect(per_pe, matches):
    """Why the run's figures cannot be trusted as they stand, if they cannot."""
    reasons = [] if matches else ["the traffic measured does not match the fetch model"]
    saturated = [f"PE {i}: {name}" if len(per_pe) > 1 else name
                 for i, f in enumerate(per_pe) for name in f.saturated]
    if saturated:
        reasons.append(f"HMM values saturated, their figures are lower bounds: "
                       f"{', '.join(saturated)}")
    return reasons


def _title(kernel, pe):
    return (f"{kernel} {pe.rows}x{pe.cols} {pe.mask_name}, buffer {pe.buffer}, unroll "
            f"{pe.unroll}, {pe.width}x{pe.height}")


def hmm_summary(figures):
    """A few lines on what the HMM measured."""
    hmm = figures.hmm
    lines = [f"HMM: {figures.total_cycles} cycles observed; cycles waiting for a read request "
             f"{figures.rd_req_wait_cycles}, for read data {figures.rd_data_wait_cycles}, for a "
             f"write {figures.wr_req_wait_cycles}"]
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
