"""Simulation speed of Amaranth's simulator, the compiled engine and Verilator, side by side.

    python benchmarks/engines.py                 # every figure (about ten minutes)
    python benchmarks/engines.py --skip-pysim    # without the slow reference runs
    python benchmarks/engines.py --only end-to-end --only uart
    python benchmarks/engines.py --only records  # trace records: columns against dicts

Each design runs one job with its HMM against an ideal memory in the three simulators:
Amaranth's simulator and the compiled engine through hwgen's harness (its model at -O3, then
profile-guided: ``HWGEN_PGO=off`` and ``on``), Verilator on the Verilog ``hwgen build`` writes
(``hwgen.build.convert``), driven by ``benchmarks/verilator_tb.cpp``. Cycles per second count
the job's busy cycles over the seconds of the clock loop (the compiled engine's compile time and
the conversion to RTLIL are shown apart), and again over the CPU seconds of the clock loop,
which other work on a loaded machine changes far less than the wall clock; the last column is
the CPU rate against Verilator's. All must agree on the job's cycles and memory contents; the
table says so.

Then ``hwgen sim`` end to end with the default engine (``auto``) and a warm cache, a
testbench-driven UART in Amaranth's simulator and in :class:`hwgen.sim.CompiledSimulator` (in
testbenches of this project's shapes, and in the shape of Amaranth's example), and
the wall time of one full-HD dilation frame with the compiled engine, cold (an empty model
cache: RTLIL, write_cxxrtl and the C++ compiler included) and warm (the model cached), in this
process and as the command ``python -m hwgen sim``. Last, trace records decoded in bulk as
columns against a dict per record, and the peak memory of a long pipeline run.
"""

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from hwgen.build import convert
from hwgen.instrument._amaranth import simulated_time
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob
from hwgen.sim import (HostModel, instrument_pe, instrument_pipeline, run_threads,
                       run_window_filter)
from hwgen.sim import compiled

HERE = Path(__file__).parent


def _checksum(values):
    checksum = 1469598103934665603
    for v in values:
        checksum = ((checksum ^ int(v)) * 1099511628211) & ((1 << 64) - 1)
    return f"{checksum:016x}"


class _Timed:
    """Time the compiled engine's clock loop (HMM hosts and the decoding of their words
    included) and model build inside a harness call."""

    def __enter__(self):
        self.loop = self.cpu = self.build = 0.0
        self._run, self._build = compiled._run, compiled.CompiledModel.build.__func__

        def run(*args, **kwargs):
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return self._run(*args, **kwargs)
            finally:
                self.loop += time.perf_counter() - started
                self.cpu += time.process_time() - cpu

        def build(cls, *args, **kwargs):
            started = time.perf_counter()
            try:
                return self._build(cls, *args, **kwargs)
            finally:
                self.build += time.perf_counter() - started

        compiled._run = run
        compiled.CompiledModel.build = classmethod(build)
        return self

    def __exit__(self, *exc):
        compiled._run = self._run
        compiled.CompiledModel.build = classmethod(self._build)


class WindowCase:
    verilator = True

    def __init__(self, width, height, unroll):
        self.title = f"dilation 3x3 line U={unroll}, {width}x{height}, with HMM"
        self.width, self.height, self.unroll = width, height, unroll
        self.image = np.random.default_rng(0).integers(0, 256, (height, width))

    def pe(self):
        return WindowFilter("max", (3, 3), width=self.width, height=self.height,
                            unroll=self.unroll, buffer="line")

    def run(self, engine):
        run = run_window_filter(instrument_pe(self.pe()), self.image, engine=engine)
        memory = list(self.image.ravel()) + list(run.image.ravel())
        return run.figures.cycles, _checksum(memory)

    def verilator_inputs(self):
        pe = self.pe()
        memory = np.zeros(self.width * self.height + pe.out_width * pe.out_height, np.uint64)
        memory[:self.image.size] = self.image.ravel()
        return (instrument_pe(pe), memory, {"src_base": 0, "dst_base": self.image.size},
                None)


class GemmCase:
    """A GEMM job; with ``drain_interval`` the host drains the HMM's traces that often while
    it runs (in C++ in the compiled engine; the Verilator testbench never drains, so it is left
    out)."""

    def __init__(self, variant, dim, threads, drain_interval=None):
        drains = f", drained every {drain_interval}" if drain_interval else ""
        self.title = f"GEMM {variant} dim {dim}, {threads} threads, profiling HMM{drains}"
        self.job = GemmJob(variant, dim=dim, threads=threads)
        self.host = HostModel(drain_interval_cycles=drain_interval)
        self.verilator = drain_interval is None

    def design(self):
        return instrument_pipeline(Pipeline(self.job.program))

    def run(self, engine):
        storage, params = self.job.memory()
        run = run_threads(self.design(), storage, params=params, host=self.host, engine=engine)
        assert self.job.matches(storage), f"{engine}: GEMM result differs from numpy"
        return run.cycles, _checksum(storage)

    def verilator_inputs(self):
        storage, params = self.job.memory()
        return (self.design(), np.array(storage, dtype=np.uint64), params,
                (self.job.threads, self.host.launch_delay_cycles))


def run_verilator(case, folder):
    """Build the case's Verilog with Verilator and run it: ``(cycles, loop seconds, checksum,
    build seconds, loop CPU seconds)``."""
    design, memory, params, launch = case.verilator_inputs()
    pe = design.design
    verilog, _ = convert(design, "top")
    (folder / "top.v").write_text(verilog)
    rd, wr = pe.rd_beat, pe.wr_beat
    config = [
        '#include "Vtop.h"', "#define TOP Vtop",
        f"#define ADDR_BITS {pe.addr_width}", f"#define RD_LANES {rd.lanes}",
        f"#define RD_STRIDE {rd.stride}", f"#define WR_LANES {wr.lanes}",
        f"#define WR_STRIDE {wr.stride}", f"#define ELEMENT_BITS {rd.element_bits}",
        f"#define HAS_LAUNCH {int(launch is not None)}",
        f"#define THREADS {launch[0] if launch else 0}",
        f"#define LAUNCH_DELAY {launch[1] if launch else 0}",
        "#define SET_PARAMS(top) do { "
        + " ".join(f"top->PORT(ctrl, {name}) = {value};" for name, value in params.items())
        + " } while (0)",
    ]
    (folder / "tb_config.h").write_text("\n".join(config) + "\n")
    shutil.copy(HERE / "verilator_tb.cpp", folder / "tb.cpp")
    started = time.perf_counter()
    result = subprocess.run(["verilator", "--cc", "--exe", "--build", "-O3", "-Wno-fatal",
                             "-Wno-lint", "-Wno-style", "--top-module", "top", "-CFLAGS", "-O3",
                             "-j", "2", "top.v", "tb.cpp"], cwd=folder, capture_output=True,
                            text=True)
    if result.returncode:
        raise RuntimeError(f"Verilator failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    build = time.perf_counter() - started
    memory.tofile(folder / "memory.bin")
    out = subprocess.run([str(folder / "obj_dir" / "Vtop"), str(folder / "memory.bin")],
                         check=True, capture_output=True, text=True).stdout.split()
    final = np.fromfile(folder / "memory.bin", dtype=np.uint64)
    return int(out[0]), float(out[1]), _checksum(final), build, float(out[4])


@contextmanager
def _environment(**values):
    """Environment variables set while the block runs."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def speed_table(cases, *, skip_pysim):
    rows = []
    for case in cases:
        results = {}
        if not skip_pysim:
            started, cpu = time.perf_counter(), time.process_time()
            cycles, checksum = case.run("pysim")
            results["pysim"] = (cycles, time.perf_counter() - started, checksum, None,
                                time.process_time() - cpu)
        # The model at -O3, then the profile-guided one (trained on the job's first cycles;
        # "build s" counts its compile with counters, the training run and its second compile).
        for engine, pgo in (("compiled", "off"), ("compiled PGO", "on")):
            with _Timed() as timed, _environment(HWGEN_PGO=pgo):
                cycles, checksum = case.run("compiled")
            results[engine] = (cycles, timed.loop, checksum, timed.build, timed.cpu)
        if case.verilator and shutil.which("verilator"):
            with tempfile.TemporaryDirectory(prefix="hwgen-verilator-") as folder:
                results["verilator"] = run_verilator(case, Path(folder))
        rows.append((case, results))
    return rows


def print_speed_table(rows):
    print(f"{'design':64} {'engine':12} {'cycles':>10} {'loop s':>8} {'cycles/s':>12} "
          f"{'x pysim':>8} {'CPU c/s':>12} {'x pysim':>8} {'build s':>8} {'% Verilator':>11}"
          f"  same result")
    for case, results in rows:
        base = results.get("pysim")
        verilator = results.get("verilator")
        reference = next(iter(results.values()))
        for engine, (cycles, seconds, checksum, build, cpu) in results.items():
            rate, cpu_rate = cycles / seconds, cycles / cpu
            ratio = f"{rate / (base[0] / base[1]):8.0f}" if base else f"{'':8}"
            cpu_ratio = f"{cpu_rate / (base[0] / base[4]):8.0f}" if base else f"{'':8}"
            same = "yes" if cycles == reference[0] and checksum == reference[2] else "NO"
            built = f"{build:8.1f}" if build is not None else f"{'':8}"
            share = (f"{100 * cpu_rate / (verilator[0] / verilator[4]):10.1f}%" if verilator
                     else f"{'':11}")
            print(f"{case.title:64} {engine:12} {cycles:10} {seconds:8.3f} {rate:12,.0f} "
                  f"{ratio} {cpu_rate:12,.0f} {cpu_ratio} {built} {share}  {same}")


def full_hd(unrolls):
    print("\none 1920x1080 dilation frame, 3x3 line buffer, with HMM, compiled engine")
    print(f"{'U':>3} {'cache':6} {'in process s':>13} {'of which compile s':>19} {'command s':>10}")
    image = np.random.default_rng(0).integers(0, 256, (1080, 1920))
    saved = os.environ.get("HWGEN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="hwgen-cache-") as cache:
        os.environ["HWGEN_CACHE_DIR"] = cache
        compiled.CompiledModel._loaded.clear()
        try:
            for unroll in unrolls:
                for state in ("cold", "warm"):
                    if state == "cold":
                        shutil.rmtree(Path(cache) / "compiled", ignore_errors=True)
                        compiled.CompiledModel._loaded.clear()
                    pe = WindowFilter("max", (3, 3), width=1920, height=1080, unroll=unroll,
                                      buffer="line")
                    started = time.perf_counter()
                    run = run_window_filter(pe, image, engine="compiled")
                    inside = time.perf_counter() - started
                    if state == "cold":
                        shutil.rmtree(Path(cache) / "compiled", ignore_errors=True)
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "hwgen", "sim", "dilation", "--width",
                                    "1920", "--height", "1080", "--buffer", "line", "--unroll",
                                    str(unroll), "--engine", "compiled", "-q"],
                                   check=True, env=dict(os.environ, HWGEN_CACHE_DIR=cache))
                    command = time.perf_counter() - started
                    print(f"{unroll:3} {state:6} {inside:13.2f} "
                          f"{run.engine['compile_seconds']:19.2f} {command:10.2f}", flush=True)
        finally:
            if saved is None:
                os.environ.pop("HWGEN_CACHE_DIR", None)
            else:
                os.environ["HWGEN_CACHE_DIR"] = saved


def end_to_end(sizes, repeats=3):
    """``hwgen sim dilation --buffer line --unroll 8`` with the default engine (``auto``) and a
    warm model cache (the model built by a first run with ``--engine compiled``: ``auto`` alone
    never compiles a job as short as 64 x 16): the command's wall time and its
    ``simulation_seconds``, best of ``repeats``."""
    print("\nsim dilation --buffer line --unroll 8, --engine auto, warm (best of "
          f"{repeats}; load average {os.getloadavg()[0]:.1f})")
    print(f"{'frame':>9} {'engine':9} {'cycles':>8} {'simulation_seconds':>19} {'command s':>10}")
    # As a user's shell has it: the default engine, and Python's bytecode cache (an environment
    # that turns it off recompiles hwgen's modules at every start, about 0.5 s loaded).
    env = {key: value for key, value in os.environ.items()
           if key not in ("HWGEN_ENGINE", "PYTHONDONTWRITEBYTECODE")}
    with tempfile.TemporaryDirectory(prefix="hwgen-e2e-") as folder:
        report = Path(folder) / "sim.json"
        for width, height in sizes:
            def command(engine):
                return [sys.executable, "-m", "hwgen", "sim", "dilation", "--buffer", "line",
                        "--unroll", "8", "--width", str(width), "--height", str(height),
                        "--engine", engine, "-q", "--json", str(report)]

            subprocess.run(command("compiled"), check=True, env=env)    # builds the model
            walls, simulated = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                subprocess.run(command("auto"), check=True, env=env)
                walls.append(time.perf_counter() - started)
                data = json.loads(report.read_text())
                simulated.append(data["simulation_seconds"])
            print(f"{width:>4}x{height:<4} {data['engine']['name']:9} {data['cycles']:8} "
                  f"{min(simulated):19.3f} {min(walls):10.2f}", flush=True)


def timed_run(sim):
    """Run ``sim`` (an Amaranth simulator) to its end: the seconds it took by the wall clock and
    by the CPU clock."""
    started, cpu = time.perf_counter(), time.process_time()
    sim.run()
    return time.perf_counter() - started, time.process_time() - cpu


def uart(divisor=10, count=100):
    """Amaranth's example UART, looped back, driven by async testbenches: the same testbenches in
    ``amaranth.sim.Simulator`` and in :class:`hwgen.sim.CompiledSimulator`. Looped back by a
    testbench that acts every cycle (Python runs every cycle), in the two shapes such a
    testbench takes: ``async for`` over ``ctx.tick().sample(tx_o)`` setting ``rx_i``, and
    ``await ctx.tick()`` then ``ctx.set(rx_i, ctx.get(tx_o))``; and by the design (the
    testbenches only wait with ``tick().until``: the clock runs in C++ between bytes).
    Microseconds per cycle by the wall clock and by the CPU clock (which a loaded machine
    changes less)."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from amaranth.hdl import Module
    from amaranth.sim import Simulator

    from hwgen.sim import CompiledSimulator
    from uart_design import UART, uart_testbench

    def tick_get_set(dut):
        async def loop(ctx):
            while True:
                await ctx.tick()
                ctx.set(dut.rx_i, ctx.get(dut.tx_o))
        return loop

    data = [i * 37 % 256 for i in range(count)]
    for looped_by in ("testbench: async for tick().sample()",
                      "testbench: await tick(), get, set", "design"):
        print(f"\nUART (divisor {divisor}) looped back by the {looped_by}, {count} bytes, "
              f"testbench-driven")
        print(f"{'simulator':18} {'seconds':>8} {'cycles/s':>10} {'us/cycle':>9} "
              f"{'CPU us/cycle':>12} {'x pysim':>8} {'cycles in C++':>14}  same log")
        logs, base = {}, None
        for kind in (Simulator, CompiledSimulator):
            uart_, log = UART(divisor=divisor), []
            loop, send, receive = uart_testbench(uart_, data, log)
            if looped_by == "design":
                top = Module()
                top.submodules.uart = uart_
                top.d.comb += uart_.rx_i.eq(uart_.tx_o)
            else:
                top = uart_
            if "await tick()" in looped_by:
                loop = tick_get_set(uart_)
            sim = kind(top)
            sim.add_clock(1e-6)
            if looped_by != "design":
                sim.add_testbench(loop, background=True)
            sim.add_testbench(send)
            sim.add_testbench(receive)
            seconds, cpu = timed_run(sim)
            cycles = round(simulated_time(sim) / 1e9)    # femtoseconds at 1 MHz
            base = base or seconds
            logs[kind] = log
            batched = getattr(sim, "batched_cycles", 0)
            print(f"{kind.__name__:18} {seconds:8.3f} {cycles / seconds:10,.0f} "
                  f"{1e6 * seconds / cycles:9.2f} {1e6 * cpu / cycles:12.2f} "
                  f"{base / seconds:8.2f} {batched:14,}  "
                  f"{'yes' if log == logs[Simulator] else 'NO'}", flush=True)


def uart_example(divisor=5, count=100):
    """Amaranth's UART example as its own testbench drives it (``tests/uart_design.py``'s
    ``ExampleUART`` and ``example_testbench``): ``tx_o`` looped to ``rx_i`` by a background
    testbench over ``ctx.changed(tx_o)``, and ``count`` bytes each sent with two ticks, checked
    after ``tick().repeat(12 * divisor)`` and taken with two more. The same testbenches in
    ``amaranth.sim.Simulator`` and :class:`hwgen.sim.CompiledSimulator`: microseconds per cycle
    by the wall and CPU clocks, the ratio to Amaranth's simulator by each, the cycles the
    compiled one ran in C++."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from amaranth.sim import Simulator

    from hwgen.sim import CompiledSimulator
    from uart_design import example_uart_simulation

    data = [i * 37 % 256 for i in range(count)]
    print(f"\nUART of Amaranth's example (divisor {divisor}), its testbench: ctx.changed(tx_o) "
          f"loopback, {count} bytes with tick().repeat({12 * divisor}) (load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"{'simulator':18} {'cycles':>7} {'seconds':>8} {'us/cycle':>9} {'CPU us/cycle':>12} "
          f"{'x pysim':>8} {'CPU x pysim':>11} {'cycles in C++':>14}  same log")
    logs, base = {}, None
    for kind in (Simulator, CompiledSimulator):
        log = []
        sim = example_uart_simulation(kind, divisor, data, log)
        seconds, cpu = timed_run(sim)
        cycles = round(simulated_time(sim) / 1e9)    # femtoseconds at 1 MHz
        base = base or (seconds, cpu)
        logs[kind] = log
        print(f"{kind.__name__:18} {cycles:7} {seconds:8.3f} {1e6 * seconds / cycles:9.2f} "
              f"{1e6 * cpu / cycles:12.2f} {base[0] / seconds:8.2f} {base[1] / cpu:11.2f} "
              f"{getattr(sim, 'batched_cycles', 0):14,}  "
              f"{'yes' if log == logs[Simulator] else 'NO'}", flush=True)


def records(count=1_000_000, dim=128, sampled=20_000):
    """Trace records: ``count`` records of a GEMM pipeline's thread-state and sample traces
    decoded from words as columns (:class:`hwgen.sim.TraceRecords`) and as one dict per record
    (the layout's ``decode_record``): seconds, and the memory allocated per million records
    (``tracemalloc``'s peak over the first ``sampled`` records, which it slows down); then
    ``hwgen run gemm --variant naive --dim <dim> --threads 8 --engine compiled`` as a command,
    its wall and CPU seconds and peak resident memory (the model cached by a first run)."""
    import resource
    import tracemalloc
    import warnings

    from amaranth.hdl import UnusedElaboratable

    from hwgen.sim import TraceRecords

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)     # built for its layout only
        design = instrument_pipeline(Pipeline(GemmJob("naive", dim=32, threads=8).program))
        layout = design.layout
        del design
        gc.collect()        # its parts go now, while the warning is ignored
    rng = np.random.default_rng(0)
    print(f"\ntrace records: {count:,} per trace, decoded (load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"{'trace':14} {'words':>6} {'columns s':>10} {'MB/M':>6} {'dicts s':>8} {'MB/M':>6}"
          f"  equal")
    for name in ("thread_states", "samples"):
        trace = layout.trace(name)
        n = trace.entry_words(layout.word_bits)
        words = rng.integers(0, 1 << 63, count * n, dtype=np.uint64)

        def columns(words):
            return TraceRecords.decode(trace, words, layout.word_bits)

        def dicts(words):
            return [trace.decode_record(row, layout.word_bits)
                    for row in words.reshape(-1, n).tolist()]

        figures = []
        for decode in (columns, dicts):
            tracemalloc.start()
            decode(words[:sampled * n])
            megabytes = tracemalloc.get_traced_memory()[1] / 1e6 * 1e6 / sampled
            tracemalloc.stop()
            started = time.perf_counter()
            decoded = decode(words)
            figures.append((decoded, time.perf_counter() - started, megabytes))
        (a, a_s, a_mb), (b, b_s, b_mb) = figures
        same = len(a) == len(b) and all(a[i] == b[i] for i in range(0, count, count // 1000))
        print(f"{name:14} {n:6} {a_s:10.2f} {a_mb:6.0f} {b_s:8.2f} {b_mb:6.0f}  "
              f"{'yes' if same else 'NO'}", flush=True)
        del a, b, figures

    command = [sys.executable, "-m", "hwgen", "run", "gemm", "--variant", "naive", "--dim",
               str(dim), "--threads", "8", "--engine", "compiled", "-q"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)     # builds the model
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # A fresh process for the measured run: RUSAGE_CHILDREN's peak is the largest child's.
    measured = subprocess.run(
        [sys.executable, "-c", "import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *command],
        check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"run gemm --variant naive --dim {dim} --threads 8 --engine compiled (warm): "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak {int(measured.stdout) / 1024:.0f} MB "
          f"resident", flush=True)


SECTIONS = ("speed", "end-to-end", "uart", "full-hd", "records")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-pysim", action="store_true",
                        help="leave out Amaranth's simulator (minutes per design)")
    parser.add_argument("--skip-full-hd", action="store_true", help="leave out the full-HD frame")
    parser.add_argument("--only", action="append", choices=SECTIONS,
                        help="run only this section (repeatable; default: every one)")
    args = parser.parse_args()
    sections = args.only or SECTIONS
    if "speed" in sections:
        cases = [WindowCase(512, 512, 8), GemmCase("naive", 32, 8), GemmCase("naive", 32, 8, 64)]
        print_speed_table(speed_table(cases, skip_pysim=args.skip_pysim))
    if "end-to-end" in sections:
        end_to_end([(512, 512), (64, 16)])
    if "uart" in sections:
        uart(divisor=10, count=100)
        uart(divisor=104, count=40)     # 115,200 baud from 12 MHz
        uart_example(divisor=5, count=100)     # the example's divisor
        uart_example(divisor=104, count=40)
    if "full-hd" in sections and not args.skip_full_hd:
        full_hd((1, 8))
    if "records" in sections:
        records()


if __name__ == "__main__":
    main()
