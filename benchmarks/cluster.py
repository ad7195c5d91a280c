"""How much faster a synthesis sweep runs on more Dask workers.

Runs the same sweep (``hwgen roofline --resources synth``: a short simulation and a Yosys
synthesis per design point) on a LocalCluster of each number of worker processes, every run with
empty caches (this machine's and the workers'), and prints the times side by side with the
speed-up over the first. The sweeps' results must be equal, else it stops.

    python benchmarks/cluster.py [--workers 1,2] [--unroll 1,2,4,8] [--buffer none,smart,line]
                                 [--image 128x64] [--board ulx3s-85f]
"""

import argparse
import os
import platform
import tempfile
import time

from hwgen.catalog import board_tree_policy, resolve_board
from hwgen.roofline.cluster import Cluster
from hwgen.roofline.sweep import design_grid, measure


def _ints(text):
    return [int(item) for item in text.split(",")]


def sweep_seconds(workers, points, board):
    """Seconds the sweep takes on ``workers`` fresh worker processes, and its measurements."""
    with tempfile.TemporaryDirectory(prefix="hwgen-cluster-bench-") as cache:
        # The workers inherit the variable: they synthesize afresh too.
        os.environ["HWGEN_CACHE_DIR"] = cache
        with Cluster(workers) as cluster:
            started = time.perf_counter()
            found = measure(points, board, resources="synth", engine="pysim", cluster=cluster)
            return time.perf_counter() - started, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2", help="worker counts to compare")
    parser.add_argument("--unroll", default="1,2,4,8")
    parser.add_argument("--buffer", default="none,smart,line")
    parser.add_argument("--image", default="128x64", help="WxH")
    parser.add_argument("--board", default="ulx3s-85f")
    args = parser.parse_args()
    width, height = _ints(args.image.replace("x", ","))
    points = design_grid("dilation", unrolls=_ints(args.unroll), buffers=args.buffer.split(","),
                         width=width, height=height,
                         tree_stages=board_tree_policy(resolve_board(args.board)))
    print(f"synthesis sweep: dilation 3x3, {args.buffer} x U{args.unroll} ({len(points)} points), "
          f"{width}x{height}, {args.board}; Amaranth's simulator, Yosys per point")
    print(f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    times, reference = {}, None
    for workers in _ints(args.workers):
        times[workers], found = sweep_seconds(workers, points, args.board)
        if reference is None:
            reference = found
        elif found != reference:
            raise SystemExit(f"the sweep on {workers} workers measured differently")
    first = next(iter(times.values()))
    print(" | ".join(f"{n} worker{'s' if n > 1 else ''} {seconds:.1f} s"
                     + ("" if seconds == first else f" ({first / seconds:.2f}x)")
                     for n, seconds in times.items()))


if __name__ == "__main__":
    main()
