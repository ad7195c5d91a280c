"""``hwgen sim``: run a kernel in Amaranth's simulator against the memory model."""

import json
import time
from pathlib import Path

import numpy as np

from tqdm import tqdm

from sim import MemoryModel, check_image, instrument_pe, run_window_filter

from ..errors import HwgenError
from ..imageio import read_image
from ..options import add_kernel_options, design_name, window_filter_from_args
from ..outputs import check_file_option, write_files
from ..timeline import Timeline
from ..trace_export import add_trace_options, check_trace_options, trace_files
from ..versions import tool_versions
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


def register(subparsers):
    parser = subparsers.add_parser(
        "sim", help="simulate a kernel on an image and report its figures",
        description="Simulate a window-filter PE in Amaranth's simulator against a memory model.")
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


def run(args):
    for option, path in (("--output", args.output), ("--json", args.json), ("--vcd", args.vcd)):
        check_file_option(option, path)
    tracing = check_trace_options(args)
    if tracing:
        timeline_depth, drain_interval = _timeline_options(args)
    if args.output and Path(args.output).suffix.lower() not in (".npy", ".png", ".pgm"):
        raise HwgenError(f"--output must end in .npy, .png or .pgm, not {Path(args.output).name!r}")
    image = read_image(args.input) if args.input else None
    pe = window_filter_from_args(args, None if image is None else image.shape)
    memory = memory_from_args(args)
    if image is None:
        rng = np.random.default_rng(args.seed)
        image = rng.integers(0, 1 << pe.pixel_bits, size=(pe.height, pe.width))
    try:
        image = check_image(image, pe)
    except ValueError as error:
        raise HwgenError(f"--input: {error}") from None
    design, drain = pe, None
    if tracing:
        design, drain = instrument_pe(pe, timeline_depth=timeline_depth), drain_interval
    with tqdm(total=pe.ideal_cycles(), unit="cycle", unit_scale=True, disable=args.quiet,
              leave=False, desc="simulating") as bar:
        started = time.perf_counter()
        result = run_window_filter(design, image, memory=memory, vcd=args.vcd,
                                   instrument=args.instrument, drain_interval_cycles=drain,
                                   progress=lambda cycles: bar.update(cycles - bar.n))
        elapsed = time.perf_counter() - started

    figures = result.figures
    model = pe.traffic()
    report = {
        "tool_versions": tool_versions(),
        "kernel": args.kernel,
        "parameters": pe.parameters(),
        "memory": memory.to_json(),
        "input": args.input or f"random (seed {args.seed})",
        **figures.to_json(),
        "fetch_model": model.to_json(),
        "fetch_model_matches": (figures.bytes_read == model.bytes_read
                                and figures.bytes_written == model.bytes_written),
        "simulation_seconds": elapsed,
    }
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
        print(f"{_title(args.kernel, pe)}: {figures.cycles} cycles "
              f"({figures.outputs_per_cycle:.3f} outputs/cycle, {figures.ops_per_cycle:.3f} ops/cycle)")
        print(f"  read {figures.bytes_read} B, wrote {figures.bytes_written} B, ops {figures.ops}, "
              f"CI {figures.ci:.3f} ops/byte; fetch model "
              f"{'matches' if report['fetch_model_matches'] else 'DOES NOT MATCH'}")
        if figures.hmm is not None:
            for line in hmm_summary(figures):
                print(f"  {line}")
        if tracing:
            timeline = report["timeline"]
            dropped = timeline["records_dropped"]
            print(f"  timeline: {timeline['records']} records of FSM states and stream categories"
                  + (f", {dropped} DROPPED (drain faster or deepen --timeline-depth)"
                     if dropped else ""))
            for path in timeline["files"]:
                print(f"  wrote {path}")
        print(f"  simulated in {elapsed:.1f} s ({figures.cycles / elapsed:.0f} cycles/s)")
    return 0


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
