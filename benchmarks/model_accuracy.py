"""How close and how fast the cycle models (hwgen.model) are, against the compiled simulation.

Window filters: random design points (seeded; none of them the configurations that
``benchmarks/characterise.py`` fits on) across buffers, U, window sizes and masks, pixel widths,
pipelining, frame sizes, and memory models (latency, bandwidth, jitter, backpressure). Every PE
is compiled once (bare, without its HMM: the HMM changes no cycle) and simulated with several
memory models. For each family it prints the mean and largest absolute cycle error in percent of
the simulated cycles, and the model's speed against the simulation (simulation seconds without
compiling, and with it, over model seconds).

Pipeline programs: every GEMM variant across dims, threads and lanes, and the pi series across
threads and steps (PROGRAMS, none of them a job benchmarks/characterise.py fits on), each with
memory latencies, bandwidths, jitter and launch delays (PROGRAM_SETTINGS). A pipeline compiles
in 30 s to a few minutes, once.

    python benchmarks/model_accuracy.py [--pes 25] [--memories 8] [--seed 16] [--no-programs]
        [--json FILE]
"""

import argparse
import json
import random
import statistics
import sys
import time
import warnings

import numpy as np
from amaranth.hdl import UnusedElaboratable

from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.model import predict_program, predict_window
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import HostModel, run_threads
from hwgen.sim import run_window_filter
from hwgen.sim.memory import MemoryModel

SIZES = [((3, 3), "rect"), ((3, 3), "cross"), ((5, 5), "rect"), ((5, 5), "ellipse"),
         ((3, 5), "rect"), ((1, 3), "rect")]


def window_point(rng):
    """A random window filter that its buffer accepts."""
    while True:
        buffer = rng.choice(["none", "smart", "line"])
        (rows, cols), mask = rng.choice(SIZES)
        width = rng.choice([16, 20, 24, 32])
        height = rng.choice([8, 10, 12, 16])
        unroll = rng.choice([1, 2, 3, 4, 8])
        pipeline = rng.random() < 0.8
        try:
            return WindowFilter(rng.choice(["max", "min"]), (rows, cols), mask=mask,
                                pixel_bits=rng.choice([8, 8, 12]), width=width, height=height,
                                unroll=unroll, buffer=buffer, pipeline=pipeline)
        except ValueError:
            continue


def memory_point(rng):
    """A random memory model: some ideal, some slow, some narrow, some random."""
    kind = rng.choice(["ideal", "latency", "bandwidth", "both", "jitter", "backpressure"])
    latency = rng.choice([2, 4, 8, 12, 20, 32]) if kind in ("latency", "both", "jitter") else 1
    bandwidth = rng.choice([0.4, 0.75, 1.5, 2.5, 4.2]) if kind in ("bandwidth", "both") else None
    jitter = rng.choice([2, 4, 8]) if kind == "jitter" else 0
    backpressure = rng.choice([0.05, 0.15, 0.3]) if kind == "backpressure" else 0.0
    return kind, MemoryModel(bandwidth, latency, jitter, backpressure, seed=rng.randrange(1000))


PROGRAMS = [
    ("gemm", dict(variant="naive", dim=5, threads=2)), ("gemm", dict(variant="naive", dim=8, threads=4)),
    ("gemm", dict(variant="naive", dim=3, threads=6)),
    ("gemm", dict(variant="nocritical", dim=5, threads=3)),
    ("gemm", dict(variant="nocritical", dim=8, threads=8)),
    ("gemm", dict(variant="vector", dim=6, threads=2, lanes=2)),
    ("gemm", dict(variant="vector", dim=8, threads=4, lanes=2)),
    ("gemm", dict(variant="vector", dim=8, threads=2, lanes=4)),
    ("gemm", dict(variant="blocked", dim=6, threads=4, lanes=2)),
    ("gemm", dict(variant="blocked", dim=8, threads=3, lanes=2)),
    ("pi", dict(steps=40, threads=8)), ("pi", dict(steps=200, threads=8)),
    ("pi", dict(steps=90, threads=3)), ("pi", dict(steps=33, threads=3)),
]
PROGRAM_SETTINGS = [
    (MemoryModel(), HostModel(launch_delay_cycles=20)),
    (MemoryModel(latency_cycles=4), HostModel(launch_delay_cycles=0)),
    (MemoryModel(latency_cycles=12), HostModel(launch_delay_cycles=20)),
    (MemoryModel(latency_cycles=20), HostModel(launch_delay_cycles=50)),
    (MemoryModel(2.0, latency_cycles=2), HostModel(launch_delay_cycles=10)),
    (MemoryModel(latency_cycles=6, jitter_cycles=4, seed=2), HostModel(launch_delay_cycles=20)),
]


def program_rows():
    rows = []
    for kind, spec in PROGRAMS:
        for memory, host in PROGRAM_SETTINGS:
            job = GemmJob(**spec) if kind == "gemm" else PiJob(**spec)
            sim = simulate_program(job, memory, host)
            prediction = predict_program(job, memory, host)
            row = {"family": kind if kind == "pi" else f"gemm_{spec['variant']}", "job": spec,
                   "memory": memory.to_json(), "launch_delay_cycles": host.launch_delay_cycles,
                   "simulated": sim["cycles"], "predicted": prediction.cycles,
                   "bound": prediction.bound, "sim_seconds": sim["sim_seconds"],
                   "compile_seconds": sim["compile_seconds"], "result_matches": sim["matches"],
                   "spin_share": sim["spin_share"], "predicted_spin_share": prediction.spin_share,
                   "model_seconds": model_seconds(lambda: predict_program(job, memory, host),
                                                  repeat=50)}
            row["error_pct"] = 100 * (row["predicted"] - row["simulated"]) / row["simulated"]
            rows.append(row)
            print(f"{row['family']:16} {spec} L={memory.latency_cycles} "
                  f"bw={memory.bandwidth_bytes_per_cycle} jitter={memory.jitter_cycles} "
                  f"launch={host.launch_delay_cycles}: sim {row['simulated']} model "
                  f"{row['predicted']:.1f} {row['error_pct']:+6.2f}% ({row['bound']})", flush=True)
    return rows


def simulate_program(job, memory, host):
    """Simulate one job of a pipeline program with the compiled engine: cycles, seconds without
    compiling, compile seconds, and the share of thread-cycles spent spinning."""
    storage, params = job.memory()
    started = time.perf_counter()
    run = run_threads(Pipeline(job.program), storage, params=params, host=host, memory=memory,
                      max_cycles=job.cycle_budget(memory, host), engine="compiled")
    seconds = time.perf_counter() - started
    compile_s = (run.engine or {}).get("compile_seconds") or 0.0
    spin = statistics.fmean(p["spinning"] for p in run.state_percent()) / 100
    return {"cycles": run.cycles, "sim_seconds": seconds - compile_s,
            "compile_seconds": compile_s, "spin_share": spin, "matches": job.matches(storage)}


def model_seconds(predict, repeat=200):
    started = time.perf_counter()
    for _ in range(repeat):
        predict()
    return (time.perf_counter() - started) / repeat


def window_rows(pes, memories, seed):
    # Separate streams: the same seed gives the same PEs whatever --memories is.
    rng, pe_rng = random.Random(seed), random.Random(seed + 1)
    rows = []
    for index in range(pes):
        pe = window_point(pe_rng)
        image = np.random.default_rng(index).integers(0, 1 << pe.pixel_bits, (pe.height, pe.width))
        for _ in range(memories):
            kind, memory = memory_point(rng)
            started = time.perf_counter()
            run = run_window_filter(pe, image, memory=memory, instrument=False,
                                    engine="compiled")
            seconds = time.perf_counter() - started
            compile_s = (run.engine or {}).get("compile_seconds") or 0.0
            prediction = predict_window(pe, memory)
            rows.append({
                "family": "window", "memory_kind": kind, "buffer": pe.buffer, "unroll": pe.unroll,
                "size": [pe.rows, pe.cols], "mask": pe.mask_name, "pixel_bits": pe.pixel_bits,
                "pipeline": pe.pipeline, "width": pe.width, "height": pe.height,
                "memory": memory.to_json(), "simulated": run.figures.cycles,
                "predicted": prediction.cycles, "bound": prediction.bound,
                "sim_seconds": seconds - compile_s, "compile_seconds": compile_s,
                "model_seconds": model_seconds(lambda: predict_window(pe, memory)),
            })
            row = rows[-1]
            row["error_pct"] = 100 * (row["predicted"] - row["simulated"]) / row["simulated"]
            print(f"{pe.buffer:5} U={pe.unroll} {pe.rows}x{pe.cols} {pe.mask_name:7} "
                  f"{'pipe' if pe.pipeline else 'step'} {pe.width}x{pe.height} {kind:12} "
                  f"sim {row['simulated']:7} model {row['predicted']:9.1f} "
                  f"{row['error_pct']:+6.2f}%", flush=True)
    return rows


def summary(rows):
    errors = [abs(r["error_pct"]) for r in rows]
    sim = sum(r["sim_seconds"] for r in rows)
    with_compile = sim + sum(r["compile_seconds"] for r in rows)
    model = sum(r["model_seconds"] for r in rows)
    return {"configurations": len(rows), "mean_abs_error_pct": statistics.fmean(errors),
            "max_abs_error_pct": max(errors), "sim_seconds": sim,
            "sim_and_compile_seconds": with_compile, "model_seconds": model,
            "speedup": sim / model, "speedup_with_compile": with_compile / model}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pes", type=int, default=25, help="window filters to compile")
    parser.add_argument("--memories", type=int, default=8, help="memory models per filter")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--no-programs", dest="programs", action="store_false",
                        help="window filters only")
    parser.add_argument("--no-windows", dest="windows", action="store_false",
                        help="pipeline programs only")
    parser.add_argument("--json", help="write every configuration and the summary here")
    args = parser.parse_args()
    # Points the model only reads are never elaborated.
    warnings.simplefilter("ignore", UnusedElaboratable)
    windows = window_rows(args.pes, args.memories, args.seed) if args.windows else []
    programs = program_rows() if args.programs else []
    rows = windows + programs
    groups = {"all": rows, "window filters": windows}
    for key in ("buffer", "memory_kind"):
        for value in sorted({r[key] for r in windows}):
            groups[f"{key}={value}"] = [r for r in windows if r[key] == value]
    groups["pipeline=False"] = [r for r in windows if not r["pipeline"]]
    groups["programs"] = programs
    for family in sorted({r["family"] for r in programs}):
        groups[family] = [r for r in programs if r["family"] == family]
    table = {name: summary(group) for name, group in groups.items() if group}
    print(f"\n{'group':24} {'configs':>7} {'mean |err| %':>12} {'max |err| %':>11} "
          f"{'speed-up':>9} {'incl. compile':>13}")
    for name, s in table.items():
        print(f"{name:24} {s['configurations']:7} {s['mean_abs_error_pct']:12.2f} "
              f"{s['max_abs_error_pct']:11.2f} {s['speedup']:9.0f} {s['speedup_with_compile']:13.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": table, "configurations": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
