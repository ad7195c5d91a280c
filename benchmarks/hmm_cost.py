"""What the default HMM costs a window filter: storage bits and simulation time.

Prints, for ``dilation --unroll 8`` (the CLI's defaults otherwise: 3x3 rect, smart buffer,
8-bit pixels, 512x512), the flip-flop bits and RAM bits the HMM adds, and for a small image the
time Amaranth's simulator takes with and without the HMM, per run and per simulated cycle.

    python benchmarks/hmm_cost.py [--unroll 8] [--sim-sizes 32x24,64x48] [--repeats 5]
"""

import argparse
import time

import numpy as np
from amaranth.hdl import MemoryInstance

from hwgen.instrument._amaranth import (elaborate, lhs_signals, memory_ports, statements,
                                        subfragments)
from hwgen.kernels import WindowFilter
from hwgen.sim import instrument_pe, run_window_filter


def storage_bits(fragment):
    """``(flip-flop bits, block-RAM bits, distributed-RAM bits)`` of a fragment tree.

    Flip-flops are the signals assigned in clocked domains; a memory read combinationally or
    marked ``ram_style = "distributed"`` (the small count tables) is distributed RAM, any
    other memory block RAM.
    """
    flops, block, distributed = 0, 0, 0
    if isinstance(fragment, MemoryInstance):
        depth, width, attrs, _writes, reads = memory_ports(fragment)
        synchronous = all(domain != "comb" for *_, domain in reads)
        if synchronous and attrs.get("ram_style") != "distributed":
            return (0, depth * width, 0)
        return (0, 0, depth * width)
    for domain, domain_statements in statements(fragment).items():
        if domain == "comb":
            continue
        seen = set()
        for statement in domain_statements:
            for signal in lhs_signals(statement):
                if id(signal) not in seen:
                    seen.add(id(signal))
                    flops += len(signal)
    for sub, _ in subfragments(fragment):
        f, b, d = storage_bits(sub)
        flops, block, distributed = flops + f, block + b, distributed + d
    return flops, block, distributed


def resource_report(unroll):
    pe = WindowFilter("max", (3, 3), unroll=unroll, buffer="smart", width=512, height=512)
    design = instrument_pe(pe)
    top = elaborate(design, None)
    hmm = {name: sub for sub, name in subfragments(top)}["hmm"]
    flops, block, distributed = storage_bits(hmm)
    layout = design.layout
    counters = sum(f.total_bits for f in layout.stored_fields if f.overflow)
    values = layout.snapshot_bits
    print(f"dilation 3x3 rect, smart buffer, unroll {unroll}, 512x512, counters "
          f"{layout.details['counter_bits']} bits")
    print(f"  counter bits (live counts with overflow flags): {counters}")
    print(f"  snapshot register bits: {layout.snapshot_words * layout.word_bits} "
          f"({values} bits of values)")
    print(f"  HMM flip-flop bits in all: {flops} (counters, snapshot, input sampling, control "
          f"and readout)")
    print(f"  RAM bits: {block} in block RAM, {distributed} in distributed RAM (tables "
          f"{', '.join(t.name for t in layout.tables)}; latency timestamp queue)")
    print(f"  port: {layout.addr_bits} address bits, {layout.word_bits}-bit words")


def simulation_report(unroll, sizes, repeats):
    """Time runs of two image sizes with and without the HMM; the difference between the sizes
    gives the cost per simulated cycle without the fixed costs (elaboration, readout)."""
    runs = {}
    for width, height in sizes:
        pe = WindowFilter("max", (3, 3), unroll=unroll, buffer="smart", width=width,
                          height=height)
        image = np.random.default_rng(0).integers(0, 256, (height, width))
        for instrumented in (False, True):
            best = float("inf")
            for _ in range(repeats):
                started = time.process_time()
                run = run_window_filter(pe, image, instrument=instrumented)
                best = min(best, time.process_time() - started)
            runs[(width, height), instrumented] = (best, run.figures.cycles)
    (small, large) = sizes
    print(f"simulation (smart buffer, unroll {unroll}), CPU time, best of {repeats}:")
    for size in sizes:
        bare, cycles = runs[size, False]
        hmm, _ = runs[size, True]
        print(f"  {size[0]}x{size[1]}, {cycles} busy cycles: bare {bare:.3f} s, with HMM "
              f"{hmm:.3f} s: {hmm / bare:.2f}x (with elaboration and readout)")
    per_cycle = {}
    for instrumented in (False, True):
        (t0, c0), (t1, c1) = runs[small, instrumented], runs[large, instrumented]
        per_cycle[instrumented] = (t1 - t0) / (c1 - c0)
    print(f"  per simulated cycle: bare {per_cycle[False] * 1e6:.0f} us, with HMM "
          f"{per_cycle[True] * 1e6:.0f} us: slowdown {per_cycle[True] / per_cycle[False]:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unroll", type=int, default=8, help="unroll of the resource report")
    parser.add_argument("--sim-sizes", default="32x24,64x48",
                        help="two image sizes WxH of the timing runs")
    parser.add_argument("--sim-unroll", type=int, default=1, help="unroll of the timing run")
    parser.add_argument("--repeats", type=int, default=5, help="timing runs, best counts")
    args = parser.parse_args()
    resource_report(args.unroll)
    sizes = [tuple(int(v) for v in size.lower().split("x")) for size in args.sim_sizes.split(",")]
    simulation_report(args.sim_unroll, sizes, args.repeats)


if __name__ == "__main__":
    main()
