"""``hwgen list``: the kernels (and their parameters) hwgen can build, the programs ``run`` runs
(and their options), and the built-in boards."""

import json

from ...boards import builtin_boards

from ...catalog import KERNELS, KernelInfo
from ..kernels import user_kernels
from ...programs import PROGRAMS
from ..programs import named_programs
from ...versions import tool_versions
from ..options import add_option

__all__ = ["add_options", "run"]

DESCRIPTION = ("List the kernels hwgen can build, the pipeline programs `hwgen run` runs, "
               "their parameters, and the built-in boards.")


def add_options(parser):
    add_option(parser, "--json", action="store_true", help="print JSON for machines", shown=None)


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


def program_summary(name, job):
    """What ``list --json`` says about a program of ``hwgen run``: its declared options."""
    return {**job.to_json(), "name": name}


def _parameter_lines(parameters):
    for name, spec in parameters.items():
        allowed = spec["allowed"]
        allowed = ", ".join(map(str, allowed)) if isinstance(allowed, list) else allowed
        yield f"  {name:12} default {spec['default']}; {allowed}"


def run(args):
    builtin = {name: info for name, info in KERNELS.items() if isinstance(info, KernelInfo)}
    own = user_kernels()
    kernels = [info.to_json() for info in builtin.values()] + [
        {"name": name, "description": kind.description,
         "options": [option.to_json() for option in kind.options]} for name, kind in own.items()]
    boards = builtin_boards()
    if args.json:
        print(json.dumps({"tool_versions": tool_versions(), "kernels": kernels,
                          "programs": [program_summary(name, job)
                                       for name, job in named_programs().items()],
                          "boards": [board_summary(b) for b in boards.values()]}, indent=2))
        return 0
    print("kernels:")
    for info in builtin.values():
        print(f"  {info.name:10} {info.description}")
    print("kernel parameters (options of build, sim, synth, estimate, overhead):")
    for line in _parameter_lines(next(iter(builtin.values())).parameters()):
        print(line)
    print(f"kernels of your own (image PEs: KERNEL as module:Name or file.py:Name, or installed "
          f"under the entry points {KERNELS.group!r}):" + ("" if own else " none installed"))
    for name, kind in own.items():
        print(f"  {name:10} {kind.description}")
        for option in kind.options:
            print(f"    {option.flag:14} default {option.default}; {option.allowed}: {option.help}")
    print(f"programs (hwgen run PROGRAM; PROGRAM may also be a job of your own as module:Name or "
          f"file.py:Name, and installed packages add theirs under the entry points "
          f"{PROGRAMS.group!r}):")
    for name, job in named_programs().items():
        print(f"  {name:10} {job.description}")
        print(f"  {name} options:")
        for option in job.options:
            print(f"    {option.flag:14} default {option.default}; {option.allowed}: {option.help}")
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
