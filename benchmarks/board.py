"""The board path's targets, measured: `deploy` of the dilation the issue names (64x64, line
buffer, unroll 4) for the ULX3S, its bitstream, resources and timing margin; then `board run
--simulate` of the same deployment, twice (the second run is warm), with its figures beside
those `sim` gives for the same job.

    python benchmarks/board.py [--board ulx3s-85f|icebreaker] [--size 64] [--no-cache]

Targets: deploy < 10 minutes on 2 cores with timing met; board run --simulate < 60 s warm.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hwgen.board.manifest import Deployment
from hwgen.sim import run_window_filter


def hwgen(*args):
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hwgen", *args], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"hwgen {' '.join(args)} failed:\n{done.stderr}")
    return time.perf_counter() - started, done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", default="ulx3s-85f")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        out = Path(work, "deploy")
        side = str(args.size)
        seconds, printed = hwgen("deploy", "dilation", "--buffer", "line", "--unroll", "4",
                                 "--width", side, "--height", side, "--board", args.board,
                                 "--out", str(out), *(["--no-cache"] if args.no_cache else []))
        print(printed.rstrip())
        print(f"deploy: {seconds:.1f} s (target < 600 s on 2 cores)")
        runs = []
        for attempt in ("cold", "warm"):
            result = Path(work, f"{attempt}.json")
            seconds, _ = hwgen("board", "run", str(out), "--simulate", "--json", str(result),
                               "-q")
            runs.append(seconds)
            print(f"board run --simulate ({attempt}): {seconds:.1f} s (target < 60 s warm)")
        board = json.loads(result.read_text())
        deployment = Deployment(json.loads((out / "manifest.json").read_text()))
        image = np.random.default_rng(0).integers(0, 256, size=(args.size, args.size))
        sim = run_window_filter(deployment.pe, image, engine="pysim").figures
        print(f"{'figure':24} {'simulated board':>16} {'sim':>10}")
        for key in ("cycles", "ops", "bytes_read", "bytes_written", "rd_data_wait_cycles",
                    "total_cycles"):
            print(f"{key:24} {board[key]:>16} {getattr(sim, key):>10}")
        print(f"result matches numpy: {board['result_matches_numpy_model']}")


if __name__ == "__main__":
    main()
