"""Characterise the cycle models: fit their factors to short simulations and write them to
hwgen/model/characterisation.json.

The window-filter model is closed form except for what random backpressure adds beyond the
mean beat times (hwgen.model.window.spread_terms); its two factors, pipelined and one step at
a time, are fitted here by least squares on the relative cycle error, over window filters on
18x10 frames (a size benchmarks/model_accuracy.py never draws) with backpressure 0.05 to 0.3.

The pipeline-program model adds a share of the second largest of its bounds to the largest and
scales the sum (hwgen.model.program); per program kind (each GEMM variant, pi) ``scale`` and
``overlap`` are fitted here by least squares on the relative error, over the jobs of PROGRAMS
with ideal and slow memories and two launch delays (none of them a job
benchmarks/model_accuracy.py draws).

The simulations use the compiled engine; each design compiles once (a pipeline takes 30 s to a
few minutes).

    python benchmarks/characterise.py [--only window|programs] [--dry-run]
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
from hwgen.model.program import largest_two, program_bounds, program_shape
from hwgen.model.window import predict_window, spread_terms
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import HostModel, run_window_filter
from hwgen.sim.memory import MemoryModel

from model_accuracy import simulate_program

WIDTH, HEIGHT = 18, 10
PES = [
    dict(buffer="line", unroll=1, size=(3, 3)), dict(buffer="line", unroll=3, size=(3, 3)),
    dict(buffer="smart", unroll=1, size=(3, 3)), dict(buffer="smart", unroll=2, size=(5, 5)),
    dict(buffer="none", unroll=1, size=(3, 3)), dict(buffer="none", unroll=4, size=(3, 5)),
]
BACKPRESSURE = (0.05, 0.15, 0.3)
LATENCIES = (1, 6)

PROGRAMS = [
    ("gemm", dict(variant="naive", dim=4, threads=4)), ("gemm", dict(variant="naive", dim=6, threads=3)),
    ("gemm", dict(variant="nocritical", dim=4, threads=4)),
    ("gemm", dict(variant="nocritical", dim=6, threads=2)),
    ("gemm", dict(variant="vector", dim=4, threads=4, lanes=2)),
    ("gemm", dict(variant="vector", dim=8, threads=3, lanes=4)),
    ("gemm", dict(variant="blocked", dim=4, threads=3, lanes=2)),
    ("gemm", dict(variant="blocked", dim=8, threads=5, lanes=4)),
    ("pi", dict(steps=64, threads=4)), ("pi", dict(steps=150, threads=4)),
    ("pi", dict(steps=100, threads=2)),
]
SETTINGS = [(MemoryModel(), HostModel(launch_delay_cycles=20)),
            (MemoryModel(latency_cycles=8), HostModel(launch_delay_cycles=20)),
            (MemoryModel(latency_cycles=3), HostModel(launch_delay_cycles=0))]


def make_job(kind, spec):
    return GemmJob(**spec) if kind == "gemm" else PiJob(**spec)


def fit_program(rows):
    """``scale`` and ``overlap`` of ``cycles = scale (first + overlap second)``, least squares
    on the relative error, and the kinds of bound that were the largest."""
    a = np.array([[r["first"] / r["simulated"], r["second"] / r["simulated"]] for r in rows])
    if not a[:, 1].any():            # one bound only: no overlap to fit
        scale = float(np.linalg.lstsq(a[:, :1], np.ones(len(rows)), rcond=None)[0][0])
        overlap = 0.0
    else:
        (scale, product), *_ = np.linalg.lstsq(a, np.ones(len(rows)), rcond=None)
        overlap = product / scale
    return {"scale": round(float(scale), 4), "overlap": round(float(overlap), 4),
            "bounds": sorted({r["bound"] for r in rows})}


def characterise_programs():
    rows = {}
    for kind, spec in PROGRAMS:
        for memory, host in SETTINGS:
            job = make_job(kind, spec)
            shape = program_shape(job)
            bounds = program_bounds(shape, memory, host)
            first, second = largest_two(bounds)
            simulated = simulate_program(job, memory, host)["cycles"]
            rows.setdefault(shape.kind, []).append(
                {"simulated": simulated, "first": first, "second": second,
                 "bound": max(bounds, key=bounds.get)})
            print(f"{shape.kind} {spec} latency {memory.latency_cycles} launch "
                  f"{host.launch_delay_cycles}: sim {simulated}, bounds {bounds}", flush=True)
    factors = {kind: fit_program(r) for kind, r in rows.items()}
    for kind, f in factors.items():
        print(f"{kind}: {f}")
    return factors


def fit(rows, key):
    """Least-squares factor of ``key``'s term on the relative error of the other terms."""
    rows = [r for r in rows if r["terms"][key]]
    num = sum((r["simulated"] - r["base"]) * r["terms"][key] / r["simulated"] ** 2 for r in rows)
    den = sum(r["terms"][key] ** 2 / r["simulated"] ** 2 for r in rows)
    return num / den


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the factors, write nothing")
    parser.add_argument("--only", choices=("window", "programs"))
    args = parser.parse_args()
    warnings.simplefilter("ignore", UnusedElaboratable)
    table = json.loads(characterisation.PATH.read_text())
    if args.only != "window":
        table["programs"] = characterise_programs()
        table["programs_fitted_on"] = {
            "programs": [[kind, spec] for kind, spec in PROGRAMS],
            "settings": [{"memory": m.to_json(), "launch_delay_cycles": h.launch_delay_cycles}
                         for m, h in SETTINGS]}
    if args.only != "programs":
        table["window"] = characterise_window()
    if not args.dry_run:
        characterisation.PATH.write_text(json.dumps(table, indent=2) + "\n")
        print(f"wrote {characterisation.PATH}")
    return 0


def characterise_window():
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
    return {"backpressure_spread": factors,
            "fitted_on": {"frame": [WIDTH, HEIGHT], "pes": PES, "backpressure": BACKPRESSURE,
                          "latencies": LATENCIES, "configurations": len(rows)}}


if __name__ == "__main__":
    sys.exit(main())
