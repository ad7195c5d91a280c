"""``hwgen deploy``: a bitstream of a PE, its HMM, its memory and a UART bridge for a board."""

import io
import json
from pathlib import Path

from ...board.build import PLATFORMS, BuildFailed, build_bitstream, build_plan
from ...board.manifest import deployment_top, make_manifest
from ...board.memory import bank_count
from ...board.protocol import PROTOCOL
from ...board.top import frame_elements, largest_frame, largest_memory, memory_blocks
from ...catalog import design_name, resolve_board
from ...errors import HwgenError
from ...kernels.pipeline import Pipeline
from ...programs import PROGRAMS
from ...resources.estimate import estimate
from ...sim import instrument_pe, instrument_pipeline
from ..options import add_kernel_options, add_option, add_quiet_option, window_filter_from_args
from ..outputs import check_folder_option, write_files
from ..programs import add_program_options, job_from_args

__all__ = ["add_options", "run"]

DESCRIPTION = ("Build a bitstream for a board through Amaranth's platform flow (amaranth-boards, "
               "YoWASP Yosys and nextpnr): the kernel's PE (or the program's pipeline, its "
               "threads started by a launcher as `run`'s host starts them) with its HMM, the "
               "job's memory in "
               "block RAM and a UART bridge that `hwgen board run` talks to. Prints the "
               "bitstream's path, its resources and the timing margin at the board's clock, and "
               "writes the bitstream, the tools' logs and manifest.json into --out. Builds are "
               "cached.")

def add_options(parser):
    add_kernel_options(parser, programs=PROGRAMS)
    add_program_options(parser, host=True)
    add_option(parser, "--board", default="ulx3s-85f", metavar="|".join(PLATFORMS),
               help="the board to build for")
    add_option(parser, "--probes", default="default", choices=("minimal", "default"),
               metavar="minimal|default", help="what the HMM measures (see `hwgen sim`)")
    add_option(parser, "--baud", type=int, default=115200, metavar="BAUD",
               help="the UART's baud rate")
    add_option(parser, "--out", metavar="DIR", default=None, help="output folder",
               shown="deploy/<kernel>-<parameters>-<board>")
    add_option(parser, "--no-build", dest="build", action="store_false",
               help="write Amaranth's build plan (build_plan.zip: RTLIL, constraints, the "
                    "tools' scripts) and the manifest without running the tools; `board run "
                    "--simulate` runs from it", shown="the bitstream is built")
    add_option(parser, "--no-cache", dest="cache", action="store_false",
               help="run the tools even if a cached bitstream exists", shown="the cache is used")
    add_quiet_option(parser, "print only errors")


def divisor_for(clock_mhz, baud):
    """Clock cycles per UART bit at ``baud``; raises HwgenError when the rate is off by more
    than 2 % (a UART tolerates about half a bit over a frame of ten)."""
    if baud < 1:
        raise HwgenError(f"--baud must be a positive integer, not {baud}")
    divisor = round(clock_mhz * 1e6 / baud)
    if divisor < 2 or abs(clock_mhz * 1e6 / divisor - baud) / baud > 0.02:
        raise HwgenError(f"--baud {baud} is not within 2 % of the {clock_mhz:g} MHz clock over a "
                         f"whole number of at least 2 cycles; try 115200, 230400 or 1000000")
    return divisor


def check_fits(board, pe, design, elements, program=False):
    """Block RAMs of a job of ``elements``; raises HwgenError when they do not fit beside the
    PE and its HMM, naming the largest frame (or job memory, for a ``program``) that does."""
    banks = bank_count(pe.rd_beat, pe.wr_beat)
    bits = pe.rd_beat.element_bits
    blocks = memory_blocks(board.family, elements, banks, bits)
    used = estimate(design, board).bram
    free = board.resources.bram_blocks - used
    if blocks > free:
        fits = f"{board.name} has {free} left beside the PE and its HMM ({used})"
        if program:
            largest = largest_memory(board.family, free, banks, bits)
            raise HwgenError(f"--dim/--steps: the job needs {elements} elements of memory, "
                             f"{blocks} block RAMs, and {fits}; the largest job memory that "
                             f"fits is {largest} elements")
        (width, height), (side, _) = largest_frame(board.family, free, pe)
        at_width = (f"{width}x{height} at this width, " if height else
                    f"none at width {width}, ")
        raise HwgenError(f"--width/--height: the {pe.width}x{pe.height} frame's job needs "
                         f"{elements} elements of memory, {blocks} block RAMs, and {fits}; the "
                         f"largest frame that fits is {at_width}{side}x{side} square")
    return blocks


def run(args):
    if args.board not in PLATFORMS:
        raise HwgenError(f"--board must be one of {', '.join(PLATFORMS)}, not {args.board!r}")
    board = resolve_board(args.board)
    divisor = divisor_for(board.clock_mhz, args.baud)
    platform = board.elaboration_platform()
    job = None
    if args.kernel in PROGRAMS:
        if args.launch_delay < 0:
            raise HwgenError(f"--launch-delay must be an integer >= 0, not {args.launch_delay}")
        job = job_from_args(args, args.kernel)
        pe = Pipeline(job.program)
        name = f"{job.program.name}_t{job.threads}"
        elements = len(job.memory()[0])
    else:
        pe = window_filter_from_args(args, board=board)
        name = design_name(args.kernel, pe)
        elements = frame_elements(pe)
    out = Path(args.out or Path("deploy") / f"{name}-{board.name}")
    check_folder_option("--out", out)
    try:
        bank_count(pe.rd_beat, pe.wr_beat)
    except ValueError as error:
        raise HwgenError(f"--buffer {pe.buffer}: {error}; deploy buffer line or none") from None
    if job is None:
        design = instrument_pe(pe, platform=platform, probes=args.probes)
    else:
        design = instrument_pipeline(pe, probes=args.probes, platform=platform)
    blocks = check_fits(board, pe, design, elements, program=job is not None)
    top = deployment_top(design, elements, divisor, args.launch_delay)
    if not args.build:
        archive = io.BytesIO()
        build_plan(top, board).archive(archive)
        manifest = make_manifest(kernel=args.kernel, pe=pe, design=design, top=top, board=board,
                                 probes=args.probes, baud=args.baud, memory_blocks=blocks,
                                 bitstream=None, protocol=PROTOCOL, job=job,
                                 launch_delay_cycles=args.launch_delay)
        write_files({out / "build_plan.zip": archive.getvalue(),
                     out / "manifest.json": json.dumps(manifest, indent=2) + "\n"})
        if not args.quiet:
            print(f"build plan: {out / 'build_plan.zip'} (not built: run its build_top.sh "
                  f"with the tools, or deploy without --no-build)\n"
                  f"  job memory: {elements} elements, {blocks} block RAMs\n"
                  f"  wrote {out / 'manifest.json'}; `hwgen board run {out} --simulate` runs it")
        return 0
    if not args.quiet:
        print(f"building {name} for {board.name} (Yosys, nextpnr, pack: minutes)...")
    try:
        bitstream = build_bitstream(top, board, use_cache=args.cache)
    except BuildFailed as error:
        if "no BELs remaining" in str(error) or "Failed to expand region" in str(error):
            raise HwgenError(f"the design does not fit {board.name}: nextpnr ran out of logic "
                             f"cells ({error}); try --probes minimal or a smaller --unroll"
                             ) from None
        raise HwgenError(f"the {board.name} build failed: {error}") from None
    manifest = make_manifest(kernel=args.kernel, pe=pe, design=design, top=top, board=board,
                             probes=args.probes, baud=args.baud, memory_blocks=blocks,
                             bitstream=bitstream, protocol=PROTOCOL, job=job,
                             launch_delay_cycles=args.launch_delay)
    files = {out / name: path.read_bytes() for name, path in bitstream.files.items()}
    files[out / "manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    write_files(files)
    if not args.quiet:
        print(summary(bitstream, manifest, out))
    if not bitstream.timing_met:
        raise HwgenError(f"timing not met on {board.name}: Fmax {bitstream.fmax_mhz:.1f} MHz < "
                         f"the {board.clock_mhz:g} MHz clock (the bitstream is in {out}, but do "
                         f"not trust it)")
    return 0


def summary(bitstream, manifest, out):
    cached = " [cached]" if bitstream.cached else f" in {bitstream.build_seconds:.0f} s"
    used = ", ".join(f"{cell} {used}/{total}" for cell, (used, total)
                     in bitstream.utilisation.items() if used)
    verdict = "met" if bitstream.timing_met else "NOT MET"
    memory = manifest["memory"]
    return "\n".join([
        f"bitstream: {out / manifest['files']['bitstream']}{cached}",
        f"  resources (nextpnr): {used}",
        f"  job memory: {memory['elements']} elements in {memory['banks']} bank(s), "
        f"{memory['block_rams']} block RAMs",
        f"  timing {verdict}: Fmax {bitstream.fmax_mhz:.1f} MHz at a {bitstream.clock_mhz:g} MHz "
        f"clock, margin {bitstream.margin_mhz:+.1f} MHz (slack {bitstream.slack_ns:+.2f} ns)",
        f"  UART: {manifest['uart']['baud']} baud ({manifest['uart']['divisor']} cycles per bit)",
        f"  wrote {out / 'manifest.json'} and the tools' logs beside it; run it with "
        f"`hwgen board run {out} --serial PORT`",
    ])
