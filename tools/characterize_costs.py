"""Characterise what each primitive kind costs per family, with real synthesis.

For every kind of :data:`hwgen.estimate.KINDS` at several widths, and for memories over a grid
of depths and widths, this builds a micro-benchmark (the primitive alone between module ports),
synthesizes all of them in one Yosys run per family without flattening, reads every module's
cells from ``stat -json`` and writes ``boards/costs/<family>.json``, the table the estimator
prices designs with. Rerun it after a Yosys upgrade:

    python tools/characterize_costs.py [FAMILY ...] [-q]

Families: ecp5, ice40, xilinx-xc6v, xilinx-xc7, xilinx-xcup (default: all).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amaranth.hdl import Elaboratable, Module, Mux, Signal  # noqa: E402
from amaranth.lib.memory import Memory  # noqa: E402
from tqdm import tqdm  # noqa: E402

from boards import COSTS_DIR, builtin_boards  # noqa: E402
from hwgen import __version__  # noqa: E402
from hwgen.build import to_rtlil  # noqa: E402
from hwgen.estimate import KINDS, RESOURCES  # noqa: E402
from hwgen.synth import cell_resources, primitive_cells, run_yosys  # noqa: E402
from hwgen.versions import tool_versions  # noqa: E402

WIDTHS = (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64)
MEMORY_DEPTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
MEMORY_WIDTHS = (8, 16, 32, 64, 128, 256, 512, 1024)
ASYNC_DEPTHS = (16, 32, 64)
ASYNC_WIDTHS = (8, 16, 32, 64)
# The board whose toolchain settings each family's characterisation uses.
FAMILY_BOARDS = {"ecp5": "ulx3s-85f", "ice40": "icebreaker", "xilinx-xc6v": "ex500",
                 "xilinx-xc7": "arty-a7-100t", "xilinx-xcup": "alveo-u280"}


def _constant(width):
    """A constant with mixed bits, for the ``*_const`` kinds."""
    return int("10" * width, 2) & ((1 << width) - 1) | 1


class Primitive(Elaboratable):
    """One primitive of ``kind`` and ``width`` between ports ``a``, ``b``, ``s`` and ``y``."""

    def __init__(self, kind, width):
        self.kind, self.width = kind, width
        self.a = Signal(width)
        self.b = Signal(width)
        self.s = Signal()
        out = {"cmp": 1, "cmp_const": 1, "eq": 1, "eq_const": 1, "reduce": 1, "reduce_xor": 1}
        self.y = Signal(out.get(kind, width))

    def ports(self):
        return [self.a, self.b, self.s, self.y]

    def elaborate(self, platform):
        m = Module()
        a, b, s, y, w = self.a, self.b, self.s, self.y, self.width
        if self.kind == "ff":
            with m.If(s):
                m.d.sync += y.eq(a)
            return m
        logic = {
            "add": lambda: (a + b)[:w],
            "add_const": lambda: (a + 1)[:w],
            "cmp": lambda: a < b,
            "cmp_const": lambda: a < _constant(w),
            "eq": lambda: a == b,
            "eq_const": lambda: a == _constant(w),
            "minmax": lambda: Mux(a > b, a, b),
            "mux": lambda: Mux(s, a, b),
            "and": lambda: a & b,
            "xor": lambda: a ^ b,
            "reduce": lambda: a.any(),
            "reduce_xor": lambda: a.xor(),
        }[self.kind]
        m.d.comb += y.eq(logic())
        return m


class MemoryBench(Elaboratable):
    """A memory with one write port and one read port (``sync`` or ``async``)."""

    def __init__(self, depth, width, read):
        self.depth, self.width, self.read = depth, width, read
        self.wa = Signal(range(depth))
        self.wd = Signal(width)
        self.we = Signal()
        self.ra = Signal(range(depth))
        self.re = Signal()
        self.rd = Signal(width)

    def ports(self):
        return [self.wa, self.wd, self.we, self.ra, self.re, self.rd]

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self.width, depth=self.depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="comb" if self.read == "async" else "sync")
        m.d.comb += [wr.addr.eq(self.wa), wr.data.eq(self.wd), wr.en.eq(self.we),
                     rd.addr.eq(self.ra), self.rd.eq(rd.data)]
        if self.read == "sync":
            m.d.comb += rd.en.eq(self.re)
        return m


def benches():
    """``{module name: (description, bench)}`` of every micro-benchmark."""
    found = {}
    for kind in KINDS:
        for width in WIDTHS:
            if kind in ("reduce", "reduce_xor") and width == 1:
                continue
            found[f"op_{kind}_{width}"] = ({"kind": kind, "width": width}, Primitive(kind, width))
    for read, depths, widths in (("sync", MEMORY_DEPTHS, MEMORY_WIDTHS),
                                 ("async", ASYNC_DEPTHS, ASYNC_WIDTHS)):
        for depth in depths:
            for width in widths:
                found[f"mem_{read}_{depth}x{width}"] = (
                    {"read": read, "depth": depth, "width": width}, MemoryBench(depth, width, read))
    return found


class Suite(Elaboratable):
    def __init__(self, found):
        self.found = found

    def elaborate(self, platform):
        m = Module()
        for name, (_, bench) in self.found.items():
            m.submodules[name] = bench
        return m


def characterize(family):
    board = builtin_boards()[FAMILY_BOARDS[family]]
    found = benches()
    ports = [port for _, bench in found.values() for port in bench.ports()]
    rtlil = to_rtlil(Suite(found), "top", ports=ports)
    with tempfile.TemporaryDirectory(prefix="hwgen-characterize-") as work:
        work = Path(work)
        (work / "design.il").write_text(rtlil)
        started = time.perf_counter()
        command, workarounds, stat = run_yosys(board, work, flatten=False)
        seconds = time.perf_counter() - started
    modules = {name.lstrip("\\").rsplit(".", 1)[-1]: data for name, data in stat["modules"].items()}
    operators = {kind: {"widths": [], **{r: [] for r in RESOURCES}} for kind in KINDS}
    memories = []
    for name, (spec, _) in found.items():
        counts = cell_resources(board.family, primitive_cells(modules[name]))
        if "kind" in spec:
            entry = operators[spec["kind"]]
            entry["widths"].append(spec["width"])
            for resource in RESOURCES:
                entry[resource].append(counts[resource])
        else:
            memories.append({**spec, **{r: counts[r] for r in RESOURCES}})
    return {
        "hwgen_cost_table": 1,
        "family": family,
        "board": board.name,
        "command": command,
        "workarounds": list(workarounds),
        "hwgen_version": __version__,
        "tool_versions": tool_versions(),
        "synthesis_seconds": round(seconds, 1),
        "units": "lut: LUT equivalents (logic + LUT RAM + ECP5 carry LUTs); bram: blocks of the "
                 "family's kind (Xilinx: RAMB18); widths in bits",
        "operators": operators,
        "memories": memories,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("families", nargs="*", default=list(FAMILY_BOARDS), metavar="FAMILY",
                        help=f"families to characterise, of {', '.join(FAMILY_BOARDS)} "
                             f"(default: all)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    unknown = [f for f in args.families if f not in FAMILY_BOARDS]
    if unknown:
        parser.error(f"FAMILY must be one of {', '.join(FAMILY_BOARDS)}, not {unknown[0]!r}")
    COSTS_DIR.mkdir(exist_ok=True)
    for family in tqdm(args.families, desc="characterising", disable=args.quiet):
        table = characterize(family)
        (COSTS_DIR / f"{family}.json").write_text(json.dumps(table, indent=1) + "\n")
        if not args.quiet:
            tqdm.write(f"{family}: {len(table['memories'])} memories and "
                       f"{sum(len(e['widths']) for e in table['operators'].values())} operators "
                       f"in {table['synthesis_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
