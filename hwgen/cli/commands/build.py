"""``hwgen build``: a window filter to Verilog, RTLIL and a manifest."""

import time
from pathlib import Path

from ...instrument import PROTOCOL as HMM_PROTOCOL
from ...sim import instrument_pe

from ...build import convert, port_table, write_outputs
from ...catalog import design_name, resolve_board
from ..options import add_kernel_options, window_filter_from_args

__all__ = ["register", "add_instrument_option", "window_manifest"]

PE_PROTOCOL = (
    "Drive ctrl__src_base and ctrl__dst_base (element addresses), pulse ctrl__start for one "
    "cycle; ctrl__busy stays high until ctrl__done pulses in the last busy cycle. Streams "
    "transfer on valid & ready. rd_req beats ask for element addr + l*stride in every lane l "
    "whose mask bit is set; rd_rsp returns them in order, lane for lane; wr_req writes its data "
    "lanes likewise. Addresses wrap modulo 2**addr_width."
)


def register(subparsers):
    parser = subparsers.add_parser(
        "build", help="generate Verilog, RTLIL and a manifest for a kernel",
        description="Generate a window-filter PE as Verilog (<top>.v), RTLIL (<top>.il) and "
                    "manifest.json.")
    add_kernel_options(parser)
    parser.add_argument("--board", metavar="B", default=None,
                        help="build for a board's part: its vendor primitives (such as the ECP5 "
                             "block RAM's output register) and its register policy; a built-in "
                             "board (see `hwgen list`) or a .toml/.json board file (default: a "
                             "generic design)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output folder (default: build/<kernel>-<parameters>[-<board>])")
    add_instrument_option(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    parser.set_defaults(func=run)


def add_instrument_option(parser):
    parser.add_argument("--no-instrument", dest="instrument", action="store_false",
                        help="leave out the hardware measurement module (default: every FSM, "
                             "stream and PE figure is measured and readable on the hmm__* ports)")


def window_manifest(kernel, pe, name, design, board=None):
    """What a build records about a window-filter PE (``design``: the PE, or it instrumented)."""
    manifest = {
        "kernel": kernel,
        "top": name,
        "board": None if board is None else board.name,
        "parameters": pe.parameters(),
        "ports": port_table(design),
        "protocol": PE_PROTOCOL,
        "fetch_model": pe.traffic().to_json(),
        "hardware_comparators": pe.hardware_ops(),
        "instrumented": design is not pe,
    }
    if design is not pe:
        manifest["hmm"] = design.layout.to_json()
        manifest["hmm_protocol"] = HMM_PROTOCOL
    return manifest


def run(args):
    started = time.perf_counter()
    board = None if args.board is None else resolve_board(args.board)
    platform = None if board is None else board.elaboration_platform()
    pe = window_filter_from_args(args, board=board)
    design = instrument_pe(pe, platform=platform) if args.instrument else pe
    name = design_name(args.kernel, pe)
    if board is not None:
        name += "_" + board.name.replace("-", "_")
    out_dir = Path(args.out) if args.out else Path("build") / name.replace("_", "-")
    verilog_text, rtlil_text = convert(design, name, platform=platform)
    result = write_outputs(out_dir, name, verilog_text, rtlil_text,
                           window_manifest(args.kernel, pe, name, design, board))
    elapsed = time.perf_counter() - started
    if not args.quiet:
        print(summary(args.kernel, pe, name, result, elapsed, design))
    return 0


def summary(kernel, pe, name, result, elapsed, design):
    t = pe.traffic()
    p = pe.parameters()
    lines = [
        f"{kernel} {pe.rows}x{pe.cols} {pe.mask_name} mask (K={pe.active}), {pe.pixel_bits}-bit "
        f"pixels, {pe.width}x{pe.height} image -> {pe.out_width}x{pe.out_height} outputs",
        f"  buffer {pe.buffer}, unroll {pe.unroll}, {'pipelined' if pe.pipeline else 'not pipelined'}, "
        f"tree stages {pe.tree_stages}/{pe.tree_levels}, credits {pe.credits}, "
        f"datapath latency {pe.datapath_latency} cycles",
        f"  read beats: {p['rd_beat']['lanes']} lanes, stride {p['rd_beat']['stride']}; "
        f"write beats: {p['wr_beat']['lanes']} lanes, stride {p['wr_beat']['stride']}; "
        f"addresses {pe.addr_width} bits",
        f"fetch model ({t.formula}):",
        f"  reads {t.reads} px ({t.bytes_read} B), writes {t.writes} px ({t.bytes_written} B), "
        f"steps {t.steps}",
        f"  ops {t.ops} ({t.ops_per_output} per output), CI {t.ci:.3f} ops/byte; "
        f"{pe.hardware_ops()} comparators in hardware",
    ]
    if design is not pe:
        layout = design.layout
        lines.append(
            f"HMM: {len(layout.fields)} values, {len(layout.tables)} tables "
            f"({', '.join(t.name for t in layout.tables)}), {len(layout.traces)} traces; port "
            f"hmm__* with {layout.addr_bits}-bit addresses and {layout.word_bits}-bit words")
    else:
        lines.append("no HMM (--no-instrument)")
    lines.append(f"wrote {result.verilog}, {result.rtlil.name}, {result.manifest.name} "
                 f"(top {name}) in {elapsed:.1f} s")
    return "\n".join(lines)
