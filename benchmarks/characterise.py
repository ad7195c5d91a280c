"""Characterise the cycle model: fit its factors to short simulations and write them to
hwgen/model/characterisation.json.

The window-filter model is closed form except for what random backpressure adds beyond the
mean beat times (hwgen.model.window.spread_terms); its two factors, pipelined and one step at
a time, are fitted here by least squares on the relative cycle error, over window filters on
18x10 frames (a size benchmarks/model_accuracy.py never draws) with backpressure 0.05 to 0.3.
The simulations use the compiled engine; each PE compiles once.

    python benchmarks/characterise.py [--dry-run]
"""

import argparse
import itertools
import json
import sys
import warnings

import numpy as np
from amaranth.hdl import UnusedElaboratable

from hwgen.kernels import WindowFilter
from hwgen.model import characterisation
from hwgen.model.window import predict_window, spread_terms
from hwgen.sim import run_window_filter
from hwgen.sim.memory import MemoryModel

WIDTH, HEIGHT = 18, 10
PES = [
    dict(buffer="line", unroll=1, size=(3, 3)), dict(buffer="line", unroll=3, size=(3, 3)),
    dict(buffer="smart", unroll=1, size=(3, 3)), dict(buffer="smart", unroll=2, size=(5, 5)),
    dict(buffer="none", unroll=1, size=(3, 3)), dict(buffer="none", unroll=4, size=(3, 5)),
]
BACKPRESSURE = (0.05, 0.15, 0.3)
LATENCIES = (1, 6)


def fit(rows, key):
    """Least-squares factor of ``key``'s term on the relative error of the other terms."""
    rows = [r for r in rows if r["terms"][key]]
    num = sum((r["simulated"] - r["base"]) * r["terms"][key] / r["simulated"] ** 2 for r in rows)
    den = sum(r["terms"][key] ** 2 / r["simulated"] ** 2 for r in rows)
    return num / den


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the factors, write nothing")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UnusedElaboratable)
    table = json.loads(characterisation.PATH.read_text())
    zero = {"pipelined": 0.0, "step": 0.0}
    rows = []
    for spec, pipeline in itertools.product(PES, (True, False)):
        spec = dict(spec)
        pe = WindowFilter("max", spec.pop("size"), width=WIDTH, height=HEIGHT, pipeline=pipeline,
                          **spec)
        image = np.random.default_rng(1).integers(0, 256, (HEIGHT, WIDTH))
        for p, latency in itertools.product(BACKPRESSURE, LATENCIES):
            memory = MemoryModel(latency_cycles=latency, backpressure=p, seed=11)
            simulated = run_window_filter(pe, image, memory=memory, instrument=False,
                                          engine="compiled").figures.cycles
            characterisation.CHARACTERISATION["window"]["backpressure_spread"] = zero
            base = predict_window(pe, memory).cycles
            rows.append({"simulated": simulated, "base": base,
                         "terms": spread_terms(pe, memory, pe.traffic().steps)})
            print(f"{pe.buffer:5} U={pe.unroll} {pe.rows}x{pe.cols} "
                  f"{'pipe' if pipeline else 'step'} p={p} L={latency}: sim {simulated}, "
                  f"model without spread {base:.1f}", flush=True)
    factors = {key: round(fit(rows, key), 3) for key in ("pipelined", "step")}
    print(f"backpressure spread factors: {factors}")
    table["window"] = {"backpressure_spread": factors,
                       "fitted_on": {"frame": [WIDTH, HEIGHT], "pes": PES,
                                     "backpressure": BACKPRESSURE, "latencies": LATENCIES,
                                     "configurations": len(rows)}}
    if not args.dry_run:
        characterisation.PATH.write_text(json.dumps(table, indent=2) + "\n")
        print(f"wrote {characterisation.PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
