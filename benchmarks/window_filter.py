"""Window-filter figures: build time, simulation speed, and cycles per frame against H*W/U.

    python benchmarks/window_filter.py            # 3x3 rect, 512x512 frames (several minutes)
    python benchmarks/window_filter.py --height 64  # shorter frames, same width

Cycles are for an ideal memory (response one cycle after the request, no backpressure).
"""

import argparse
import time

import numpy as np

from hwgen.build import convert
from hwgen.kernels import WindowFilter
from hwgen.sim import run_window_filter


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--height", type=int, default=512)
    parser.add_argument("--unroll", default="1,4,8", help="comma-separated unroll factors")
    parser.add_argument("--buffers", default="line,smart,none")
    args = parser.parse_args()
    unrolls = [int(u) for u in args.unroll.split(",")]
    w, h = args.width, args.height
    image = np.random.default_rng(0).integers(0, 256, (h, w))

    print(f"3x3 rect dilation, {w}x{h} frame, ideal memory")
    print(f"{'buffer':6} {'U':>3} {'build s':>8} {'cycles':>9} {'H*W/U':>9} {'ratio':>6} "
          f"{'steps':>8} {'outputs/cyc':>11} {'sim cyc/s':>9}")
    for buffer in args.buffers.split(","):
        for unroll in unrolls:
            started = time.perf_counter()
            convert(WindowFilter("max", (3, 3), width=w, height=h, unroll=unroll, buffer=buffer),
                    "top")
            build_s = time.perf_counter() - started
            pe = WindowFilter("max", (3, 3), width=w, height=h, unroll=unroll, buffer=buffer)
            started = time.perf_counter()
            run = run_window_filter(pe, image)
            sim_s = time.perf_counter() - started
            cycles = run.figures.cycles
            ideal = h * w / unroll
            print(f"{buffer:6} {unroll:3} {build_s:8.2f} {cycles:9} {ideal:9.0f} "
                  f"{cycles / ideal:6.3f} {pe.traffic().steps:8} "
                  f"{run.figures.outputs_per_cycle:11.3f} {cycles / sim_s:9.0f}", flush=True)


if __name__ == "__main__":
    main()
