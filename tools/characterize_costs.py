"""Characterise what each primitive kind costs per family, with real synthesis.

For every kind of :data:`hwgen.resources.estimate.KINDS` at several widths, and for memories over a grid
of depths and widths, this builds a micro-benchmark (the primitive alone between its own
top-level ports), synthesizes all of them side by side in one flattened Yosys run per family
(the flow ``hwgen synth`` uses), splits the netlist into its connected parts (clock and reset
aside, benchmarks share no net), counts each part's cells and writes
``boards/costs/<family>.json``, the table the estimator prices designs with.

And-or selections (``select``, a parking stage's hand-over of a thread's context) are
characterised over their ways (:data:`SELECT_WAYS`, each :data:`SELECT_BITS` wide), and a
parking stage's thread scheduler (``scheduler``: the round robin, every grant taken) over its
threads (:data:`SCHEDULER_THREADS`); a register's multiplexer (``mux_ff``) is priced from the
``mux`` benchmarks.

Multipliers are characterised on a grid of width pairs (:data:`MULTIPLIERS`): the DSP count
Yosys gives each is recorded beside the count :func:`hwgen.resources.estimate.dsp_blocks`
derives, and their LUT, FF and carry cells are fitted as linear in the closed-form counts of
:func:`hwgen.resources.estimate.multiplier_parts` (:func:`multiplier_model`).

Isolated, every narrow gate takes a LUT of its own; in a design ABC packs neighbouring logic
into shared LUTs. So the script then calibrates: it synthesizes a set of window filters, of
instrumented PEs and of pipeline programs that is disjoint from the accuracy benchmark's (other
window shapes, masks, unrolls, pixel widths and images; other threads, lanes, element and
fraction bits),
and fits one non-negative factor per LUT group (:data:`hwgen.resources.estimate.LUT_GROUPS`)
by least squares; the estimator multiplies each group's isolated LUT cost by its factor. Rerun
it after a Yosys upgrade:

    python tools/characterize_costs.py [FAMILY ...] [--calibrate-only]
        [--kinds KIND ...] [--no-calibrate] [-q]

Families: ecp5, ice40, xilinx-xc6v, xilinx-xc7, xilinx-xcup (default: all). A run with
``--kinds`` adds a record to the table's ``partial`` list (the kinds, command and tools).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from amaranth.hdl import Elaboratable, Module, Mux, Signal
from scipy.optimize import nnls
from amaranth.lib.memory import Memory
from tqdm import tqdm

from hwgen.boards import COSTS_DIR, builtin_boards
from hwgen import __version__
from hwgen.build import to_rtlil
from hwgen.catalog import board_tree_policy, design_name, make_window_filter
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.pipeline.arbiter import RoundRobin, select
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.estimate import (DSP_MAPPING, KINDS, LUT_GROUPS, RESOURCES, count_primitives,
                                     lut_groups, multiplier_parts, rom_luts, uncalibrated_luts)
from hwgen.resources.synth import cell_resources, run_yosys, synthesize
from hwgen.sim import instrument_pe
from hwgen.versions import tool_versions

WIDTHS = (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64)
MEMORY_DEPTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
MEMORY_WIDTHS = (8, 16, 32, 64, 128, 256, 512, 1024)
ASYNC_DEPTHS = (16, 32, 64)
ASYNC_WIDTHS = (8, 16, 32, 64)
# Multipliers (a bits, b bits, result bits): full and truncated products, square and not, on
# both sides of every family's DSP widths (18, 25, 27) and below their minimum.
MULTIPLIERS = tuple((w, w, y) for w in (2, 3, 4, 6, 8, 12, 16, 18, 24, 32) for y in (w, 2 * w)) \
    + ((20, 9, 29), (12, 4, 16), (32, 8, 40), (24, 12, 36), (26, 17, 43), (48, 16, 64),
       (48, 48, 48), (64, 64, 64), (52, 21, 52), (23, 21, 23), (22, 22, 43))
# And-or selections (``select``): ways, each at SELECT_BITS bits (every bit is a tree of its own).
SELECT_WAYS = (2, 3, 4, 5, 6, 8, 12, 16, 24, 32)
SELECT_BITS = 16
# Round-robin thread schedulers (``scheduler``): threads.
SCHEDULER_THREADS = (2, 3, 4, 6, 8, 12, 16, 24, 32)
# The board whose toolchain settings each family's characterisation uses.
FAMILY_BOARDS = {"ecp5": "ulx3s-85f", "ice40": "icebreaker", "xilinx-xc6v": "ex500",
                 "xilinx-xc7": "arty-a7-100t", "xilinx-xcup": "alveo-u280"}


# Calibration designs: (kernel, rows x cols, mask, unroll, pixel bits) on a 240x120 image, each
# with every buffer. None of them is in benchmarks/estimate_accuracy.py's design space.
CALIBRATION = (
    ("dilation", (3, 5), "rect", 3, 8),
    ("erosion", (5, 3), "cross", 6, 8),
    ("dilation", (7, 7), "ellipse", 5, 8),
    ("erosion", (3, 3), "rect", 12, 12),
    ("dilation", (5, 5), "rect", 24, 8),
    ("erosion", (3, 3), "cross", 1, 16),
)
CALIBRATION_IMAGE = (240, 120)
# Instrumented PEs, as `hwgen estimate` and `build` make them by default (their hardware
# measurement module's counters, saturation tests and readout multiplexers are most of their
# logic), on small images: (kernel, rows x cols, mask, unroll, buffer, width x height). None of
# them is a benchmark point.
CALIBRATION_INSTRUMENTED = (
    ("dilation", (3, 3), "rect", 2, "none", (64, 32)),
    ("erosion", (5, 5), "rect", 8, "line", (128, 32)),
    ("dilation", (3, 5), "ellipse", 1, "smart", (48, 24)),
)
# A program's weight in the fit beside a filter's: the programs' LUTs are less well explained by
# the kinds, and at full weight they pull the filters' factors (Xilinx 7-series filters 3.4%
# instead of 3.1% on the accuracy benchmark; at 0.5 with the select and register_mux groups
# still 3.4%, at 0.3 3.1%, the programs 7.3% instead of 6.8%).
PROGRAM_WEIGHT = 0.3
# Calibration pipeline programs (bare PEs, dim 8, pi over 64 steps): other threads, lanes,
# element and fraction bits than benchmarks/estimate_accuracy.py's programs.
CALIBRATION_PROGRAMS = (
    ("gemm", {"variant": "naive", "threads": 4, "element_bits": 16}),
    ("gemm", {"variant": "nocritical", "threads": 16, "element_bits": 24}),
    ("gemm", {"variant": "vector", "threads": 4, "lanes": 2, "element_bits": 16}),
    ("gemm", {"variant": "vector", "threads": 8, "lanes": 8, "element_bits": 8}),
    ("gemm", {"variant": "blocked", "threads": 4, "lanes": 2, "element_bits": 16}),
    ("pi", {"threads": 4, "frac_bits": 12}),
    ("pi", {"threads": 16, "frac_bits": 28}),
)


def program_design(program, options):
    """``(name, pipeline)``: a program's bare PE as ``hwgen estimate PROGRAM --no-instrument``
    builds it (gemm on 8 x 8 matrices, pi over 64 steps)."""
    job = (GemmJob(dim=8, **options) if program == "gemm"
           else PiJob(steps=64, **options))
    name = "_".join([program, *(f"{k}{v}" for k, v in options.items())])
    return name, Pipeline(job.program)


def _constant(width):
    """A constant with mixed bits, for the ``*_const`` kinds."""
    return int("10" * width, 2) & ((1 << width) - 1) | 1


class Primitive(Elaboratable):
    """One primitive of ``kind`` and ``width`` between ports ``<name>__a``, ``__b``, ``__s``
    and ``__y``."""

    def __init__(self, name, kind, width):
        self.kind, self.width = kind, width
        self.a = Signal(width, name=f"{name}__a")
        self.b = Signal(width, name=f"{name}__b")
        self.s = Signal(name=f"{name}__s")
        out = {"cmp": 1, "cmp_const": 1, "eq": 1, "eq_const": 1, "reduce": 1, "reduce_xor": 1,
               "reduce_word": 1}
        self.y = Signal(out.get(kind, width), name=f"{name}__y")

    def ports(self):
        return [self.a, self.b, self.s, self.y]

    def elaborate(self, platform):
        m = Module()
        a, b, s, y, w = self.a, self.b, self.s, self.y, self.width
        if self.kind == "ff":
            with m.If(s):
                m.d.sync += y.eq(a)
            return m
        if self.kind == "shift":       # the amount as wide as the shifter has levels
            m.d.comb += y.eq((a << b[:max(1, (w - 1).bit_length())])[:w])
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
            "reduce_word": lambda: a.all(),
            "csub": lambda: Mux(a >= b, a - b, a)[:w],
            "add_gate": lambda: (Mux(s, 0, a) + b)[:w],
        }[self.kind]
        m.d.comb += y.eq(logic())
        return m


class MultiplierBench(Elaboratable):
    """``y = (a * b)[:y bits]`` between ports ``<name>__a``, ``__b`` and ``__y``."""

    def __init__(self, name, a_bits, b_bits, y_bits):
        self.a = Signal(a_bits, name=f"{name}__a")
        self.b = Signal(b_bits, name=f"{name}__b")
        self.y = Signal(y_bits, name=f"{name}__y")

    def ports(self):
        return [self.a, self.b, self.y]

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq((self.a * self.b)[:len(self.y)])
        return m


class SelectBench(Elaboratable):
    """``y``: the one of ``ways`` values whose grant bit is set, as a parking stage selects a
    thread's context (:func:`~hwgen.kernels.pipeline.arbiter.select`), between ports
    ``<name>__g``, ``__v<i>`` and ``__y``."""

    def __init__(self, name, ways, bits):
        self.grant = Signal(ways, name=f"{name}__g")
        self.values = [Signal(bits, name=f"{name}__v{i}") for i in range(ways)]
        self.y = Signal(bits, name=f"{name}__y")

    def ports(self):
        return [self.grant, *self.values, self.y]

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(select(self.grant, self.values))
        return m


class SchedulerBench(Elaboratable):
    """A parking stage's thread scheduler: a :class:`RoundRobin` of ``threads`` whose every
    grant is taken, between ports ``<name>__r`` (requests), ``__g`` (grant) and ``__v``."""

    def __init__(self, name, threads):
        self.threads = threads
        self.requests = Signal(threads, name=f"{name}__r")
        self.grant = Signal(threads, name=f"{name}__g")
        self.valid = Signal(name=f"{name}__v")

    def ports(self):
        return [self.requests, self.grant, self.valid]

    def elaborate(self, platform):
        m = Module()
        m.submodules.scheduler = scheduler = RoundRobin(self.threads)
        m.d.comb += [scheduler.requests.eq(self.requests), scheduler.accept.eq(1),
                     self.grant.eq(scheduler.grant), self.valid.eq(scheduler.valid)]
        return m


class MemoryBench(Elaboratable):
    """A memory with one write port and one read port (``sync`` or ``async``)."""

    def __init__(self, name, depth, width, read):
        self.depth, self.width, self.read = depth, width, read
        self.wa = Signal(range(depth), name=f"{name}__wa")
        self.wd = Signal(width, name=f"{name}__wd")
        self.we = Signal(name=f"{name}__we")
        self.ra = Signal(range(depth), name=f"{name}__ra")
        self.re = Signal(name=f"{name}__re")
        self.rd = Signal(width, name=f"{name}__rd")

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


def benches(kinds=None):
    """``{module name: (description, bench)}`` of every micro-benchmark (of ``kinds`` only,
    memories left out, when given)."""
    found = {}
    if kinds is None or "mul" in kinds:
        for a, b, y in MULTIPLIERS:
            name = f"mul_{a}x{b}_{y}"
            found[name] = ({"mul": (a, b, y)}, MultiplierBench(name, a, b, y))
    if kinds is None or "select" in kinds:
        for ways in SELECT_WAYS:
            name = f"op_select_{ways}"
            found[name] = ({"kind": "select", "width": ways}, SelectBench(name, ways, SELECT_BITS))
    if kinds is None or "scheduler" in kinds:
        for threads in SCHEDULER_THREADS:
            name = f"op_scheduler_{threads}"
            found[name] = ({"kind": "scheduler", "width": threads}, SchedulerBench(name, threads))
    for kind in KINDS if kinds is None else kinds:
        if kind in ("mul", "select", "scheduler", "mux_ff", "mux_chain", "mux_select"):
            continue
        for width in WIDTHS:
            if kind in ("reduce", "reduce_xor", "reduce_word") and width == 1:
                continue
            name = f"op_{kind}_{width}"
            found[name] = ({"kind": kind, "width": width}, Primitive(name, kind, width))
    if kinds is not None:
        return found
    for read, depths, widths in (("sync", MEMORY_DEPTHS, MEMORY_WIDTHS),
                                 ("async", ASYNC_DEPTHS, ASYNC_WIDTHS)):
        for depth in depths:
            for width in widths:
                name = f"mem_{read}_{depth}x{width}"
                found[name] = ({"read": read, "depth": depth, "width": width},
                               MemoryBench(name, depth, width, read))
    return found


class Suite(Elaboratable):
    def __init__(self, found):
        self.found = found

    def elaborate(self, platform):
        m = Module()
        for name, (_, bench) in self.found.items():
            m.submodules[name] = bench
        return m


def split_cells(module, found):
    """``{bench name: {cell type: count}}``: the netlist's connected parts, named by their ports.

    Nets of the clock and reset ports are left out: every register shares them.
    """
    shared = {bit for name in ("clk", "rst") if name in module["ports"]
              for bit in module["ports"][name]["bits"]}
    parent = {}

    def find(bit):
        while parent.setdefault(bit, bit) != bit:
            parent[bit] = parent[parent[bit]]
            bit = parent[bit]
        return bit

    def nets(connections):
        return [b for bits in connections.values() for b in bits
                if isinstance(b, int) and b not in shared]

    for cell in module["cells"].values():
        bits = nets(cell["connections"])
        for bit in bits[1:]:
            parent[find(bit)] = find(bits[0])
    owner = {}
    for port, data in module["ports"].items():
        bench = port.split("__")[0]
        if bench not in found:
            continue
        for bit in data["bits"]:
            if isinstance(bit, int):
                root = find(bit)
                if owner.setdefault(root, bench) != bench:
                    raise RuntimeError(f"benchmarks {owner[root]} and {bench} share logic")
    counts = {}
    for cell in module["cells"].values():
        bits = nets(cell["connections"])
        bench = owner.get(find(bits[0])) if bits else None
        if bench is not None:
            per = counts.setdefault(bench, {})
            per[cell["type"]] = per.get(cell["type"], 0) + 1
    return counts


def characterize(family, kinds=None, table=None):
    """The cost table of ``family``; with ``kinds``, only those kinds are characterised and
    written into ``table`` (the existing one), the rest kept."""
    board = builtin_boards()[FAMILY_BOARDS[family]]
    found = benches(kinds)
    ports = [port for _, bench in found.values() for port in bench.ports()]
    rtlil = to_rtlil(Suite(found), "top", ports=ports)
    with tempfile.TemporaryDirectory(prefix="hwgen-characterize-") as work:
        work = Path(work)
        (work / "design.il").write_text(rtlil)
        started = time.perf_counter()
        command, workarounds, _ = run_yosys(board, work)
        seconds = time.perf_counter() - started
        netlist = json.loads((work / "netlist.json").read_text())
    per_bench = split_cells(netlist["modules"]["top"], found)
    operators = {kind: {"widths": [], **{r: [] for r in RESOURCES}} for kind in KINDS
                 if kind not in ("mul", "mux_ff", "mux_chain", "mux_select")
                 and (kinds is None or kind in kinds)}
    if "select" in operators:     # its widths are ways, each of SELECT_BITS bits
        operators["select"]["bits"] = SELECT_BITS
    memories, multipliers = [], []
    for name, (spec, _) in found.items():
        counts = cell_resources(board.family, per_bench.get(name, {}))
        if "mul" in spec:
            a, b, y = spec["mul"]
            multipliers.append({"a": a, "b": b, "y": y, **{r: counts[r] for r in RESOURCES}})
        elif "kind" in spec:
            entry = operators[spec["kind"]]
            entry["widths"].append(spec["width"])
            for resource in RESOURCES:
                entry[resource].append(counts[resource])
        else:
            memories.append({**spec, **{r: counts[r] for r in RESOURCES}})
    if kinds is not None:
        table["operators"].update(operators)
        if "mul" in kinds:
            table["multipliers"] = multipliers
            table["multiplier"] = multiplier_model(family, multipliers)
        # One record per partial run, so the table says which kinds came from which.
        earlier = table.get("partial", [])
        table["partial"] = [*(earlier if isinstance(earlier, list) else [earlier]),
                            {"kinds": list(kinds), "command": command,
                             "tool_versions": tool_versions(), "hwgen_version": __version__,
                             "synthesis_seconds": round(seconds, 1)}]
        return table
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
        "lut_inputs": board.resources.lut_inputs,
        "operators": operators,
        "memories": memories,
        "multipliers": multipliers,
        "multiplier": multiplier_model(family, multipliers),
    }


def multiplier_model(family, multipliers):
    """Per resource, the cost of a DSP block, of a bit of the adders joining a split
    multiplier's parts, and of a partial-product bit in LUTs (:func:`multiplier_parts`), fitted
    (non-negative least squares) to the characterised multipliers; with how many of them the
    DSP rule counts exactly."""
    mapping = DSP_MAPPING.get(family)
    features = np.array([multiplier_parts(e["a"], e["b"], e["y"], mapping) for e in multipliers],
                        dtype=float)
    model = {}
    for resource in ("lut", "ff", "carry"):
        target = np.array([e[resource] for e in multipliers], dtype=float)
        model[resource] = [round(float(c), 4) for c in nnls(features, target)[0]]
    model["dsp"] = [1.0, 0.0, 0.0]
    exact = sum(int(f[0]) == e["dsp"] for f, e in zip(features, multipliers))
    model["dsp_rule_exact"] = f"{exact}/{len(multipliers)}"
    return model


def calibration_designs(board):
    """``(name, design)``: the calibration window filters, as `hwgen synth --board` builds
    them for ``board``, the instrumented PEs (named ``..._hmm``), then the calibration
    programs."""
    width, height = CALIBRATION_IMAGE
    for kernel, size, mask, unroll, bits in CALIBRATION:
        for buffer in ("none", "smart", "line"):
            pe = make_window_filter(
                kernel, size=size, mask=mask, pixel_bits=bits, width=width, height=height,
                unroll=unroll, buffer=buffer, pipeline=True,
                tree_stages=board_tree_policy(board), credits=None)
            yield design_name(kernel, pe), pe
    for kernel, size, mask, unroll, buffer, (width, height) in CALIBRATION_INSTRUMENTED:
        pe = make_window_filter(
            kernel, size=size, mask=mask, pixel_bits=8, width=width, height=height,
            unroll=unroll, buffer=buffer, pipeline=True, tree_stages=board_tree_policy(board),
            credits=None)
        yield (f"{design_name(kernel, pe)}_hmm",
               instrument_pe(pe, platform=board.elaboration_platform()))
    for program, options in CALIBRATION_PROGRAMS:
        yield program_design(program, options)


def calibrate(family, table, quiet):
    """Fit one factor per LUT group so that estimates match synthesis on the calibration set
    (non-negative least squares on the relative error)."""
    board = builtin_boards()[FAMILY_BOARDS[family]]
    uncalibrated = {k: v for k, v in table.items() if k != "calibration"}
    rows, targets, fixed, names = [], [], [], []
    designs = list(calibration_designs(board))
    for name, pe in tqdm(designs, desc=f"calibrating {family}", disable=quiet, leave=False):
        synthesized = synthesize(pe, board, name=name, fmax=False, require_fit=False)
        kinds, memories, _, _ = count_primitives(pe, platform=board.elaboration_platform())
        groups = lut_groups(uncalibrated, kinds, memories)
        rows.append([groups[g] for g in LUT_GROUPS])
        # ROMs (closed form), multipliers and barrel shifters (isolated cost) are not fitted.
        fixed.append(rom_luts(uncalibrated, kinds) + uncalibrated_luts(uncalibrated, kinds))
        targets.append(synthesized.lut - fixed[-1])
        names.append(name)
    a, b = np.array(rows), np.array(targets, dtype=float)
    # Errors are of the estimate's LUTs (the fitted groups and what is priced apart) against
    # Yosys's, not of the fitted part alone.
    fixed = np.array(fixed, dtype=float)
    real = b + fixed
    programs = np.array([not name.startswith(("dilation", "erosion")) for name in names])
    instrumented = np.array([name.endswith("_hmm") for name in names])
    filters = ~programs & ~instrumented
    weights = np.where(programs, PROGRAM_WEIGHT, 1.0)
    factors = _fit(a, b, weights)
    # Each design estimated with factors fitted without it: how the calibration generalises.
    held_out = [a[i] @ _fit(np.delete(a, i, 0), np.delete(b, i), np.delete(weights, i))
                for i in range(len(b))]
    fitted = a @ factors + fixed
    return {
        "lut_factors": {g: round(float(f), 4) for g, f in zip(LUT_GROUPS, factors)},
        "designs": names,
        "filters_fit_mean_abs_error_pct": _mean_error_pct(fitted[filters], real[filters]),
        "instrumented_fit_mean_abs_error_pct": _mean_error_pct(fitted[instrumented],
                                                               real[instrumented]),
        "programs_fit_mean_abs_error_pct": _mean_error_pct(fitted[programs], real[programs]),
        "fit_mean_abs_error_pct": _mean_error_pct(fitted, real),
        "leave_one_out_mean_abs_error_pct": _mean_error_pct(np.array(held_out) + fixed, real),
        "uncalibrated_mean_abs_error_pct": _mean_error_pct(a.sum(1) + fixed, real),
    }


def _fit(a, b, weights):
    """Non-negative factors for the columns of ``a`` that best match ``b`` in relative terms:
    each design weighted by 1 / its LUTs, or the largest designs decide the factors and the
    small ones miss by half; then by ``weights``."""
    factors, _ = nnls(a / b[:, None] * weights[:, None], weights)
    return factors


def _mean_error_pct(estimated, real):
    return round(float(np.mean(np.abs(estimated - real) / real)) * 100, 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("families", nargs="*", default=list(FAMILY_BOARDS), metavar="FAMILY",
                        help=f"families to characterise, of {', '.join(FAMILY_BOARDS)} "
                             f"(default: all)")
    parser.add_argument("--calibrate-only", action="store_true",
                        help="keep the micro-benchmark costs of the existing tables (adding "
                             "those of kinds they lack) and only redo the calibration")
    # mux_ff and mux_chain are priced from mux, mux_select from select, gate_tree in closed form.
    benched = [kind for kind in KINDS
               if kind not in ("mux_ff", "mux_chain", "mux_select", "gate_tree", "and_ff")]
    parser.add_argument("--kinds", nargs="+", metavar="KIND", default=None,
                        help=f"characterise only these kinds (of {', '.join(benched)}) into the "
                             f"existing tables, keeping the rest (default: everything)")
    parser.add_argument("--no-calibrate", action="store_true",
                        help="keep the existing tables' calibration")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.kinds and any(k not in benched for k in args.kinds):
        parser.error(f"KIND must be one of {', '.join(benched)}, not "
                     f"{next(k for k in args.kinds if k not in benched)!r}")
    unknown = [f for f in args.families if f not in FAMILY_BOARDS]
    if unknown:
        parser.error(f"FAMILY must be one of {', '.join(FAMILY_BOARDS)}, not {unknown[0]!r}")
    COSTS_DIR.mkdir(exist_ok=True)
    for family in tqdm(args.families, desc="characterising", disable=args.quiet):
        path = COSTS_DIR / f"{family}.json"
        if args.calibrate_only:
            table = json.loads(path.read_text())
            # A kind the table has no costs for yet (the estimator counts a new one) is
            # characterised first, so that one command brings a table up to date.
            missing = [k for k in benched if k not in table["operators"] and k != "mul"]
            if missing:
                table = characterize(family, missing, table)
        elif args.kinds:
            table = characterize(family, args.kinds, json.loads(path.read_text()))
        else:
            table = characterize(family)
        if not args.no_calibrate:
            table["calibration"] = calibrate(family, table, args.quiet)
        (COSTS_DIR / f"{family}.json").write_text(json.dumps(table, indent=1) + "\n")
        if not args.quiet and "calibration" in table:
            c = table["calibration"]
            tqdm.write(f"{family}: {len(table['memories'])} memories and "
                       f"{sum(len(e['widths']) for e in table['operators'].values())} operators "
                       f"in {table['synthesis_seconds']} s; LUT factors {c['lut_factors']}, "
                       f"calibration error {c['uncalibrated_mean_abs_error_pct']}% -> "
                       f"{c['fit_mean_abs_error_pct']}% (left out: "
                       f"{c['leave_one_out_mean_abs_error_pct']}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
