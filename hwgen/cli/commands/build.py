"""``hwgen build``: a window filter to Verilog, RTLIL and a manifest."""

import time
from pathlib import Path

from ...instrument import PROTOCOL as HMM_PROTOCOL

from ...build import convert, port_table, write_outputs
from ...catalog import design_name, design_title, resolve_board
from ...kernels import PESystem, WindowFilter
from ..options import (add_board_option, add_instrument_option, add_kernel_options, add_option,
                       add_quiet_option, add_system_build_options, design_from_args)
from ..outputs import check_folder_option

__all__ = ["add_options", "run", "window_manifest"]

PE_PROTOCOL = (
    "Drive ctrl__src_base and ctrl__dst_base (element addresses), pulse ctrl__start for one "
    "cycle; ctrl__busy stays high until ctrl__done pulses in the last busy cycle. Streams "
    "transfer on valid & ready. rd_req beats ask for element addr + l*stride in every lane l "
    "whose mask bit is set; rd_rsp returns them in order, lane for lane; wr_req writes its data "
    "lanes likewise. Addresses wrap modulo 2**addr_width."
)


SYSTEM_PROTOCOL = (
    "One PE port, shared: drive ctrl__src_base and ctrl__dst_base for the first PE's frame and "
    "ctrl__frame_stride (elements from one PE's frame to the next; PE i gets the bases plus "
    "i*frame_stride), pulse ctrl__start; the PEs start one per cycle; ctrl__busy stays high until "
    "ctrl__done pulses in the cycle the last PE finishes. rd_req and wr_req carry at most one "
    "beat per cycle each, from the PE a round-robin arbiter grants, laid out as a PE's beats; "
    "rd_rsp must answer reads in request order (a queue routes each response to its PE). "
    "Streams transfer on valid & ready; valid never depends on ready. See docs/systems.md."
)

#: Where builds go unless ``--out`` says: a name no Python module can have (a folder named
#: ``build`` in a clone's root would be found as ``hwgen.build`` when the clone's folder stands
#: as a namespace package ``hwgen`` on the path).
BUILD_FOLDER = "hwgen-build"

DESCRIPTION = ("Generate a window-filter PE, or with --pes a system of PEs sharing one "
               "off-chip port, as Verilog (<top>.v), RTLIL (<top>.il) and manifest.json.")


def add_options(parser):
    add_kernel_options(parser)
    add_board_option(parser, default=None,
                     help="build for a board's part: its vendor primitives (such as the ECP5 "
                          "block RAM's output register) and its register policy")
    add_option(parser, "--out", metavar="DIR", default=None, help="output folder",
               shown=f"{BUILD_FOLDER}/<kernel>-<parameters>[-<board>]")
    add_instrument_option(parser)
    add_system_build_options(parser)
    add_quiet_option(parser)


def window_manifest(kernel, pe, name, design, board=None, probes="default"):
    """What a build records about a window-filter PE or a system of them (``design``: it, or it
    instrumented)."""
    system = pe if isinstance(pe, PESystem) else None
    if system is not None:
        pe = system.pes[0]
    manifest = {
        "kernel": kernel,
        "top": name,
        "board": None if board is None else board.name,
        "parameters": pe.parameters(),
        "ports": port_table(design),
        "protocol": PE_PROTOCOL,
        "fetch_model": None if pe.traffic() is None else pe.traffic().to_json(),
        "instrumented": design is not pe,
    }
    if isinstance(pe, WindowFilter):
        manifest["hardware_comparators"] = pe.hardware_ops()
    if system is not None:
        manifest["system"] = {key: value for key, value in system.parameters().items()
                              if key != "pe"}
        manifest["protocol"] = SYSTEM_PROTOCOL
        manifest["instrumented"] = design is not system
    if manifest["instrumented"]:
        manifest["probes"] = probes
        manifest["hmm"] = design.layout.to_json()
        manifest["hmm_protocol"] = HMM_PROTOCOL
    return manifest


def run(args):
    started = time.perf_counter()
    check_folder_option("--out", args.out)
    board = None if args.board is None else resolve_board(args.board)
    platform = None if board is None else board.elaboration_platform()
    pe, design = design_from_args(args, board)
    name = design_name(args.kernel, pe)
    if board is not None:
        name += "_" + board.name.replace("-", "_")
    out_dir = Path(args.out) if args.out else Path(BUILD_FOLDER) / name.replace("_", "-")
    verilog_text, rtlil_text = convert(design, name, platform=platform)
    result = write_outputs(out_dir, name, verilog_text, rtlil_text,
                           window_manifest(args.kernel, pe, name, design, board, args.probes))
    elapsed = time.perf_counter() - started
    if not args.quiet:
        print(summary(args.kernel, pe, name, result, elapsed, design))
    return 0


def summary(kernel, pe, name, result, elapsed, design):
    system = pe if isinstance(pe, PESystem) else None
    if system is not None:
        pe = system.pes[0]
    t = pe.traffic()
    p = pe.parameters()
    if not isinstance(pe, WindowFilter):
        lines = [f"{design_title(kernel, pe)} -> {pe.out_width}x{pe.out_height} outputs",
                 f"  read beats: {pe.rd_beat.lanes} lanes, stride {pe.rd_beat.stride}; write "
                 f"beats: {pe.wr_beat.lanes} lanes, stride {pe.wr_beat.stride}; addresses "
                 f"{pe.addr_width} bits",
                 "fetch model: n/a (the PE states no closed-form traffic)" if t is None else
                 f"fetch model ({t.formula}): reads {t.reads} px ({t.bytes_read} B), writes "
                 f"{t.writes} px ({t.bytes_written} B), ops {t.ops}"]
        return "\n".join(lines + _hmm_lines(design, pe, system)
                         + [f"wrote {result.verilog}, {result.rtlil.name}, "
                            f"{result.manifest.name} (top {name}) in {elapsed:.1f} s"])
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
    if system is not None:
        lines.append(f"system: {system.count} PEs sharing one off-chip port (round-robin "
                     f"arbiters, a {system.max_outstanding_reads}-entry response queue); "
                     f"ctrl__frame_stride steps each PE's frame")
    lines += _hmm_lines(design, pe, system)
    lines.append(f"wrote {result.verilog}, {result.rtlil.name}, {result.manifest.name} "
                 f"(top {name}) in {elapsed:.1f} s")
    return "\n".join(lines)


def _hmm_lines(design, pe, system):
    if design is not pe and design is not system:
        layout = design.layout
        return [f"HMM: {len(layout.fields)} values, {len(layout.tables)} tables "
                f"({', '.join(t.name for t in layout.tables)}), {len(layout.traces)} traces; port "
                f"hmm__* with {layout.addr_bits}-bit addresses and {layout.word_bits}-bit words"]
    return ["bare PE, no HMM (--no-instrument)"]
