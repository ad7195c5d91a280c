"""``hwgen list``: the kernels (and their parameters) hwgen can build, and the built-in boards."""

import json

from ...boards import builtin_boards

from ...catalog import KERNELS
from ...versions import tool_versions

__all__ = ["register"]


def register(subparsers):
    parser = subparsers.add_parser("list", help="list kernels, their parameters and the boards",
                                   description="List the kernels hwgen can build and the built-in "
                                               "boards.")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.set_defaults(func=run)


def board_summary(board):
    """What ``list --json`` says about a board."""
    return {
        "name": board.name,
        "description": board.description,
        "device": board.device,
        "family": board.family,
        "yosys_family": board.toolchain.yosys_family,
        "device_count": board.device_count,
        "open_synthesis": board.toolchain.has_open_flow,
        "resources": {**board.resources.as_counts(), "lut_inputs": board.resources.lut_inputs,
                      "bram_kind": board.resources.bram_kind,
                      "bram_block_bits": board.resources.bram_block_bits,
                      "bram_bits": board.resources.bram_bits, "dsp_kind": board.resources.dsp_kind},
        "links": [{"name": link.name, "bandwidth_gbps": link.bandwidth_gbps,
                   "measured": link.measured, "per_device": link.per_device}
                  for link in board.links],
        "clock_mhz": board.clock_mhz,
    }


def run(args):
    kernels = [info.to_json() for info in KERNELS.values()]
    boards = builtin_boards()
    if args.json:
        print(json.dumps({"tool_versions": tool_versions(), "kernels": kernels,
                          "boards": [board_summary(b) for b in boards.values()]}, indent=2))
        return 0
    print("kernels:")
    for info in KERNELS.values():
        print(f"  {info.name:10} {info.description}")
    print("kernel parameters (options of build, sim, synth, estimate):")
    for name, spec in next(iter(KERNELS.values())).parameters().items():
        allowed = spec["allowed"]
        allowed = ", ".join(map(str, allowed)) if isinstance(allowed, list) else allowed
        print(f"  {name:12} default {spec['default']}; {allowed}")
    print("boards (--board NAME, or a .toml/.json board file):")
    for board in boards.values():
        r = board.resources
        family = board.family + (f" {board.toolchain.yosys_family}" if board.toolchain.yosys_family else "")
        links = ", ".join(f"{link.name} {link.bandwidth_gbps:g} GB/s "
                          f"{'measured' if link.measured else 'nominal'}" for link in board.links)
        print(f"  {board.name:13} {board.device_count} x {board.device} ({family}): "
              f"{r.lut:,} LUT{r.lut_inputs}, {r.ff:,} FF, {r.bram_blocks:,} {r.bram_kind.split()[0]}, "
              f"{r.dsp:,} DSP; {board.clock_mhz:g} MHz; {links}"
              + ("" if board.toolchain.has_open_flow else " (no open synthesis flow)"))
    return 0
