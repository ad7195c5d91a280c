"""What each kind of HMM probe costs on its own: storage bits, LUT, FF and RAM.

Every probe is attached alone (``attach(design, [probe], fsms=False, streams=False)``) to the
same small reference design, whose probed signals are its top-level inputs, and synthesized with
Yosys (no place and route); the HMM without any probe (cycle counter, control, readout) is
subtracted (the sampler's row subtracts an HMM with the three counters it samples besides
``cycles``), and the base row is the HMM without probes minus the bare design. Bits come from
the HMM's layout and its memories:

values
    Bits of the values the probe adds to the snapshot: every count with its overflow flag, and
    plain values (a histogram's minimum and maximum, a trace's ``written`` index).
registers
    Twice the values: each value is held once where it counts and once in the snapshot register
    the host reads. The flip-flops a probe needs at least; sampling its inputs and pipelining
    add more.
RAM bits
    Depth times width of the memories it adds: tables of counts (profiles, histogram bins),
    trace records, a latency histogram's timestamp queue.

Last, counts of one family in registers (``bank=False``) and in a counter bank, for the
cross-over (docs/hmm.md, "Counts in a counter bank").

Block RAM counts the board's blocks (ECP5 DP16KD, Xilinx RAMB18 halves); LUT RAM bits (ECP5
only) are the TRELLIS_DPR16X4 cells of 16 x 4 bits the tables occupy. A last row synthesizes the
RAM of a trace's records alone, without the HMM, for comparison.

    python benchmarks/probe_cost.py [--boards ulx3s-85f,arty-a7-100t] [--markdown] [-q]

With ``--goals DIR`` it prints instead every preset's figures on one line-buffered PE (U8 and U1,
bare, ``minimal``, ``default``, ``full``) with the critical path of each one's median seed, and the
HMM's cost goals on the ULX3S-85F beside what the JSON files in ``DIR`` measured, each written by
the command the table names (``hwgen overhead``, median Fmax of 3 seeds, for one PE; ``hwgen synth
--no-fmax`` bare and instrumented for the systems, whose Fmax goal waits for their new
interconnect):

    python benchmarks/probe_cost.py --goals DIR [--markdown]
"""

import argparse
import json
import sys
import time
from pathlib import Path

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from tqdm import tqdm

from hwgen.instrument._amaranth import elaborate, subfragments
from hwgen.catalog import resolve_board
from hwgen.errors import HwgenError
from hwgen.instrument import attach
from hwgen.instrument.probe import (Accumulate, AccumulateExclusive, Count, Histogram, Latency,
                                    Profile, Sampler, Stream, ThreadStates, Trace)
from hwgen.resources.synth import synthesize

from hmm_cost import storage_bits

#: Bits of one ECP5 distributed RAM cell (TRELLIS_DPR16X4: 16 words of 4 bits).
DPR16X4_BITS = 64


class Reference(wiring.Component):
    """The design the probes watch: inputs only, and one register so that it is not empty."""

    def __init__(self):
        super().__init__({
            "event": In(1), "value": In(16), "valid": In(1), "ready": In(1), "state": In(4),
            "payload": In(32), "request": In(1), "response": In(1), "threads": In(16),
            "seen": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.seen.eq(self.event)
        return m


def _states(n):
    return [f"S{i}" for i in range(n)]


#: (row, probes measured, probes in the row's baseline too). Each is a function of the design.
ROWS = [
    ("event counter (`Count`, 1 event)", lambda d: [Count("count", d.event)], None),
    ("accumulator of a 16-bit value (`Accumulate`)",
     lambda d: [Accumulate("sum", (d.value, d.valid))], None),
    ("16 sums of a 16-bit value, one source at a time (`AccumulateExclusive`)",
     lambda d: [AccumulateExclusive("sums", *((d.value, d.valid & (d.state == i))
                                             for i in range(16)),
                                    labels=[f"s{i}" for i in range(16)])], None),
    ("stream: transferring, blocking, idle (`Stream`)",
     lambda d: [Stream("stream", d.valid, d.ready)], None),
    ("state profile, 4 states (`Profile`)",
     lambda d: [Profile("fsm", d.state[:2], _states(4))], None),
    ("state profile, 16 states (`Profile`)",
     lambda d: [Profile("fsm", d.state, _states(16))], None),
    ("histogram, 16 bins + overflow (`Histogram`)",
     lambda d: [Histogram("hist", d.value, d.valid, bins=16)], None),
    ("histogram, 128 bins + overflow (`Histogram`)",
     lambda d: [Histogram("hist", d.value, d.valid, bins=128)], None),
    ("latency histogram, 16 outstanding, 32 bins (`Latency`)",
     lambda d: [Latency("latency", d.request, d.response, depth=16, bins=32)], None),
    ("trace, depth 64, 32-bit payload (`Trace`)",
     lambda d: [Trace("trace", {"event": d.event}, {"payload": d.payload}, depth=64)], None),
    ("trace, depth 1024, 32-bit payload (`Trace`)",
     lambda d: [Trace("trace", {"event": d.event}, {"payload": d.payload}, depth=1024)], None),
    ("sampler of 4 counters, depth 256 (`Sampler`)",
     lambda d: [Sampler("sampler", ["cycles", "c0", "c1", "c2"], period=256, depth=256)],
     # Distinct events: Yosys would merge counters of the same one.
     lambda d: [Count(f"c{i}", e) for i, e in enumerate((d.event, d.valid, d.ready))]),
    ("thread states, 8 threads, depth 256 (`ThreadStates`)",
     lambda d: [ThreadStates("threads", d.threads, threads=8, depth=256)], None),
]


#: (row, probes, bank): counts of the same family in registers (``bank=False``) and in one
#: counter bank, for the cross-over (fewer than ``BANK_MIN_COUNTS`` are never banked); each on
#: distinct inputs, which Yosys cannot merge.
BANK_ROWS = [
    (f"{n} event counts (`Count` x {n}), in {where}",
     lambda d, n=n: [Count(f"c{i}", d.threads[i]) for i in range(n)], bank)
    for n, banks in ((4, (False,)), (5, (False,)), (8, (False, True)))
    for where, bank in (("registers", False), ("a counter bank", True)) if bank in banks
] + [
    (f"{n} streams, {3 * n} counts (`Stream` x {n}), in {where}",
     lambda d, n=n: [Stream(f"s{i}", d.threads[2 * i], d.threads[2 * i + 1]) for i in range(n)],
     bank)
    for n in (2, 4) for where, bank in (("registers", False), ("a counter bank", True))
]


def bits_of(design):
    """``(value bits, RAM bits)`` of an instrumented design's HMM."""
    hmm = {name: sub for sub, name in subfragments(elaborate(design, None))}["hmm"]
    _, block, distributed = storage_bits(hmm)
    return design.layout.snapshot_bits, block + distributed


class RecordMemory(wiring.Component):
    """The records of a trace alone: a RAM with one write port and one synchronous read port,
    as a trace buffer has (:class:`~hwgen.instrument.trace_buffer.TraceBuffer`)."""

    def __init__(self, width, depth):
        self._width, self._depth = width, depth
        super().__init__({"we": In(1), "waddr": In(range(depth)), "wdata": In(width),
                          "raddr": In(range(depth)), "rdata": Out(width)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.records = records = Memory(shape=self._width, depth=self._depth, init=[])
        wr, rd = records.write_port(), records.read_port()
        m.d.comb += [wr.en.eq(self.we), wr.addr.eq(self.waddr), wr.data.eq(self.wdata),
                     rd.addr.eq(self.raddr), self.rdata.eq(rd.data)]
        return m


#: The RAM of the 1024-deep trace row's records (timestamp, trigger, payload), for comparison.
MEMORY_ROW = ("for comparison: the 1024-deep trace's RAM alone (1024 x 65 bits), no HMM", 65, 1024)


def _instrumented(probes, bank=True):
    """The reference design with an HMM of ``probes`` and its ``(value bits, RAM bits)``."""
    ref = Reference()
    design = attach(ref, probes(ref), fsms=False, streams=False, bank=bank)
    return design, bits_of(design)


def measure(make, board):
    """Bits and synthesis figures of the design ``make()`` returns with its bits."""
    design, (values, ram) = make()
    result = synthesize(design, board, fmax=False)
    return {"values": values, "ram": ram, "lut": result.lut, "ff": result.ff,
            "bram": result.bram, "dpr_bits": result.cells.get("TRELLIS_DPR16X4", 0) * DPR16X4_BITS,
            "cached": result.cached, "synth_seconds": result.synth_seconds}


def difference(a, b):
    return {key: a[key] - b[key] for key in ("values", "ram", "lut", "ff", "bram", "dpr_bits")}


def cost_rows(boards, quiet):
    """``[(row name, {board: figures})]``, the base row first; and the synthesis runs."""
    memory_name, width, depth = MEMORY_ROW
    jobs = [("bare", lambda: (Reference(), (0, 0))),
            ("base", lambda: _instrumented(lambda d: [])),
            (memory_name, lambda: (RecordMemory(width, depth), (0, width * depth)))]
    for name, probes, baseline in ROWS:
        if baseline is not None:
            jobs.append((f"{name} baseline", lambda b=baseline: _instrumented(b)))
            jobs.append((name, lambda p=probes, b=baseline:
                         _instrumented(lambda d: [*b(d), *p(d)])))
        else:
            jobs.append((name, lambda p=probes: _instrumented(p)))
    for name, probes, bank in BANK_ROWS:
        jobs.append((name, lambda p=probes, k=bank: _instrumented(p, k)))
    figures = {}
    progress = tqdm(total=len(jobs) * len(boards), desc="synthesis", disable=quiet)
    for board in boards:
        for name, make in jobs:
            figures[name, board.name] = measure(make, board)
            progress.update()
    progress.close()
    rows = [("HMM without probes (`cycles`, control, readout)",
             {b.name: difference(figures["base", b.name], figures["bare", b.name])
              for b in boards})]
    for name, _, baseline in ROWS:
        below = f"{name} baseline" if baseline is not None else "base"
        rows.append((name, {b.name: difference(figures[name, b.name], figures[below, b.name])
                            for b in boards}))
    for name, _, _ in BANK_ROWS:
        rows.append((name, {b.name: difference(figures[name, b.name], figures["base", b.name])
                            for b in boards}))
    rows.append((memory_name, {b.name: figures[memory_name, b.name] for b in boards}))
    return rows, list(figures.values())


def print_table(rows, boards, markdown):
    first, others = boards[0], boards[1:]
    columns = ["probe", "value bits", "registers", "RAM bits", f"LUT ({first.name})",
               f"FF ({first.name})", f"block RAM ({first.name})"]
    if first.family == "ecp5":
        columns.append(f"LUT RAM bits ({first.name})")
    for board in others:
        columns += [f"LUT ({board.name})", f"FF ({board.name})",
                    f"block RAM ({board.name})"]
    lines = []
    for name, by_board in rows:
        f = by_board[first.name]
        cells = [name, f["values"], 2 * f["values"], f["ram"], f["lut"], f["ff"], f["bram"]]
        if first.family == "ecp5":
            cells.append(f["dpr_bits"])
        for board in others:
            g = by_board[board.name]
            cells += [g["lut"], g["ff"], g["bram"]]
        lines.append([c if isinstance(c, str) else f"{c:,}" for c in cells])
    if markdown:
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
        for cells in lines:
            print("| " + " | ".join(cells) + " |")
        return
    widths = [max(len(str(c)) for c in column) for column in zip(columns, *lines)]
    for cells in [columns, *lines]:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))))


_PE = ("python -m hwgen overhead dilation --buffer line --unroll {unroll} --board ulx3s-85f "
       "--probes {preset} --seeds 3 --json {file}")
_SYSTEM = ("python -m hwgen synth dilation --buffer line --unroll 8 --pes max --board ulx3s-85f "
           "--no-fmax {probes} --json {file}")
_GEMM = ("python -m hwgen synth gemm --variant vector --threads 8 --board ulx3s-85f --no-fmax "
         "{probes} --json {file}")

#: The goals: (design, preset, JSON file stem, {figure: limit in percent}, command). LUT and FF
#: limits are the most the HMM may add, Fmax's the most it may take (negative). A ``synth``
#: goal reads ``<stem>.json`` and the bare build's ``<stem>-bare.json``.
GOALS = [
    ("dilation line U8 PE", "minimal", "pe-u8-minimal",
     {"lut": 25, "ff": 50, "fmax_mhz": -3}, _PE.format(unroll=8, preset="minimal", file="{file}")),
    ("dilation line U8 PE", "default", "pe-u8-default",
     {"lut": 100, "ff": 150, "fmax_mhz": -3},
     _PE.format(unroll=8, preset="default", file="{file}")),
    ("dilation line U1 PE", "minimal", "pe-u1-minimal", {"fmax_mhz": -3},
     _PE.format(unroll=1, preset="minimal", file="{file}")),
    ("dilation line U1 PE", "default", "pe-u1-default", {"fmax_mhz": -3},
     _PE.format(unroll=1, preset="default", file="{file}")),
    ("26 line U8 PEs (SC), synth", "minimal", "system-minimal", {"lut": 3.9, "ff": 3.7}, _SYSTEM),
    ("GEMM vector, 8 threads, synth", "minimal", "gemm-minimal", {"lut": 3.42, "ff": 2.41}, _GEMM),
]

_FIGURES = {"lut": "LUT", "ff": "FF", "fmax_mhz": "Fmax (MHz)"}

#: Every preset on one PE, U8 and U1: (design, unroll, preset); the JSON file is
#: ``pe-u<unroll>-<preset>.json``, written by the ``overhead`` command of the goals.
PRESET_RUNS = [(f"dilation line U{unroll} PE", unroll, preset)
               for unroll in (8, 1) for preset in ("minimal", "default", "full")]


def _seeds(run):
    """``"median (seeds a, b, c)"`` of an overhead JSON's bare or with-HMM run."""
    seeds = [f"{f:.1f}" for f in run.get("fmax_seeds_mhz") or () if f is not None]
    if run.get("fmax_mhz") is None:
        return "n/a"
    return f"{run['fmax_mhz']:.1f}" + (f" (seeds {', '.join(seeds)})" if len(seeds) > 1 else "")


def preset_rows(directory):
    """``[(cells...)]`` of every preset's figures on one PE, the bare PE first per design; the
    commands of the runs not measured yet."""
    rows, missing = [], []
    designs = {}
    for design, unroll, preset in PRESET_RUNS:
        path = directory / f"pe-u{unroll}-{preset}.json"
        designs.setdefault(design, []).append(
            (preset, json.loads(path.read_text()) if path.exists() else None))
        if not path.exists():
            missing.append(_PE.format(unroll=unroll, preset=preset, file=path))
    for design, runs in designs.items():
        measured = [report for _, report in runs if report is not None]
        if measured:
            bare = measured[0]["bare"]
            rows.append([design, "none (bare)", f"{bare['lut']:,}", f"{bare['ff']:,}",
                         _seeds(bare)])
        for preset, report in runs:
            if report is None:
                rows.append([design, preset, "n/a", "n/a", "n/a"])
                continue
            figures, run = report["figures"], report["with_hmm"]

            def change(name):
                before, after = figures[name]["bare"], figures[name]["with_hmm"]
                if before is None or after is None:
                    return "n/a"
                return f"{100 * (after - before) / before:+.1f}%"

            rows.append([design, preset, f"{run['lut']:,} ({change('lut')})",
                         f"{run['ff']:,} ({change('ff')})",
                         f"{_seeds(run)}, {change('fmax_mhz')}"])
    return rows, missing


def _first(path):
    return path[0] if path else "n/a"


def critical_paths(directory):
    """``[(design, preset, path)]``: the critical path nextpnr reported for the median seed of
    each preset measured (the bare PE's first per design), ``"n/a"`` where it reported none."""
    paths = []
    for design, unroll, preset in PRESET_RUNS:
        path = directory / f"pe-u{unroll}-{preset}.json"
        if not path.exists():
            continue
        report = json.loads(path.read_text())
        if not any(d == design for d, _, _ in paths):
            paths.append((design, "none (bare)", _first(report["bare"].get("critical_path"))))
        paths.append((design, preset, _first(report["with_hmm"].get("critical_path"))))
    return paths


def _measured(directory, stem, command):
    """``{figure: (bare, with HMM)}`` from the goal's JSON files, or None if one is missing."""
    path = directory / f"{stem}.json"
    if "overhead" in command:
        if not path.exists():
            return None
        figures = json.loads(path.read_text())["figures"]
        return {name: (f["bare"], f["with_hmm"]) for name, f in figures.items()}
    bare_path = directory / f"{stem}-bare.json"
    if not (path.exists() and bare_path.exists()):
        return None
    bare, with_hmm = (json.loads(p.read_text()) for p in (bare_path, path))
    return {name: (bare[name], with_hmm[name]) for name in ("lut", "ff")}


def goal_rows(directory):
    """``[(cells...)]`` of the goals table, and the commands of the goals not measured yet."""
    rows, missing = [], []
    for design, preset, stem, limits, command in GOALS:
        measured = _measured(directory, stem, command)
        if measured is None:
            file = directory / f"{stem}.json"
            if "overhead" in command:
                missing.append(command.format(file=file))
            else:
                missing += [command.format(probes="--no-instrument",
                                           file=directory / f"{stem}-bare.json"),
                            command.format(probes=f"--probes {preset}", file=file)]
        for figure, limit in limits.items():
            if measured is None or measured.get(figure, (None, None))[1] is None:
                rows.append([design, preset, _FIGURES[figure], "n/a", "n/a", "n/a",
                             f"{'<=' if limit > 0 else '>='} {limit:+g}%", "not measured"])
                continue
            before, after = measured[figure]
            change = 100 * (after - before) / before
            met = change <= limit if limit > 0 else change >= limit
            fmt = (lambda v: f"{v:.1f}") if figure == "fmax_mhz" else (lambda v: f"{v:,}")
            rows.append([design, preset, _FIGURES[figure], fmt(before), fmt(after),
                         f"{change:+.1f}%", f"{'<=' if limit > 0 else '>='} {limit:+g}%",
                         "met" if met else f"missed by {abs(change - limit):.1f} points"])
    return rows, missing


def _print_rows(columns, rows, markdown):
    if markdown:
        print("| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
        for cells in rows:
            print("| " + " | ".join(cells) + " |")
    else:
        widths = [max(len(c) for c in column) for column in zip(columns, *rows)]
        for cells in [columns, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())


def print_goals(directory, markdown):
    presets, missing_presets = preset_rows(directory)
    _print_rows(["design", "--probes", "LUT", "FF", "Fmax (MHz), median of the seeds"], presets,
                markdown)
    paths = critical_paths(directory)
    if paths:
        print("\nCritical path of the median seed:")
        for design, preset, path in paths:
            print(f"{'- ' if markdown else '  '}{design}, {preset}: {path}")
    print()
    rows, missing = goal_rows(directory)
    _print_rows(["design", "preset", "figure", "bare", "with HMM", "change", "goal", ""], rows,
                markdown)
    missing += [command for command in missing_presets if command not in missing]
    print("\nThe systems' Fmax goal (a drop of at most 3% on the system of SC PEs) is not "
          "measured here: nextpnr takes over two hours a seed to place 26 PEs; docs/systems.md "
          "gives 8 PEs placed bare and with `minimal`.")
    if missing:
        print("Not measured yet (write the JSON files with):")
        for command in missing:
            print(f"  {command}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="ulx3s-85f",
                        help="comma-separated boards; the first gives the main columns "
                             "(default: %(default)s)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--goals", metavar="DIR", type=Path,
                        help="print the cost goals beside the JSON files of DIR instead")
    args = parser.parse_args(argv)
    if args.goals is not None:
        if not args.goals.is_dir():
            print(f"probe_cost: error: --goals: {args.goals} is not a directory", file=sys.stderr)
            return 2
        print_goals(args.goals, args.markdown)
        return 0
    try:
        boards = [resolve_board(name) for name in args.boards.split(",")]
    except HwgenError as error:
        print(f"probe_cost: error: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    rows, runs = cost_rows(boards, args.quiet)
    print_table(rows, boards, args.markdown)
    fresh = [run["synth_seconds"] for run in runs if not run["cached"]]
    print(f"\n{len(runs)} syntheses ({len(runs) - len(fresh)} from the cache), "
          f"{time.perf_counter() - started:.0f} s in all"
          + (f"; Yosys {sum(fresh):.0f} s" if fresh else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
