"""The multithreaded-pipeline paper's case studies, run to completion with the compiled engine.

    python benchmarks/pipeline_paper.py                       # GEMM 512 x 512 and pi (an hour)
    python benchmarks/pipeline_paper.py --dim 64 --pi-steps 100000   # the same, small

GEMM: C = A @ B on 512 x 512 int32 matrices with 8 hardware threads, every variant of
``hwgen.kernels.programs.gemm``, checked against numpy; its cycles, the share of thread time
critical and spinning (from the HMM's per-thread state profiles) and the speed-up over naive,
beside the figures the paper reports for its own pipeline. Pi: the series at 1, 4 and 10 million
steps with 8 threads, with the share of thread time idle (threads not yet started or finished).

The host reads the HMM once, at the end (no drains): the state profiles and counters are exact
whatever the trace buffers had to drop. docs/pipeline.md explains where the figures differ from
the paper's and why.
"""

import argparse
import time

from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import STATE_NAMES, HostModel, MemoryModel, instrument_pipeline, run_threads

#: The paper's figures for its 512 x 512 GEMM (cycles, and speed-up over naive).
PAPER_GEMM = {
    "naive": "853,522,308 cycles; 1.54% critical, 1.57% spinning",
    "nocritical": "1.14x",
    "vector": "1.93x over no-critical (2.20x)",
    "blocked": "5.28x (double-buffered: 19x)",
}
#: The paper's pi series, in GFLOP/s on its board.
PAPER_PI = {1_000_000: "0.146 GFLOP/s", 4_000_000: "0.556 GFLOP/s", 10_000_000: "1.507 GFLOP/s"}


def run(job):
    design = instrument_pipeline(Pipeline(job.program))
    storage, params = job.memory()
    host = HostModel(drain_interval_cycles=None)
    memory = MemoryModel()
    started = time.perf_counter()
    result = run_threads(design, storage, params=params, host=host, memory=memory,
                         max_cycles=job.cycle_budget(memory, host), engine="compiled")
    return result, storage, time.perf_counter() - started


def shares(result):
    """Percent of all threads' time in each state."""
    total = result.threads * result.cycles
    return {name: 100.0 * sum(counts[code] for counts in result.state_cycles) / total
            for code, name in enumerate(STATE_NAMES)}


def gemm(dim, threads, variants=GemmJob.variants):
    print(f"GEMM {dim} x {dim}, int32, {threads} threads, ideal memory, compiled engine")
    print(f"{'variant':11} {'cycles':>13} {'critical %':>10} {'spinning %':>10} {'speed-up':>8} "
          f"{'ops/cycle':>9} {'B/cycle':>8} {'numpy':>6} {'sim s':>8} {'compile s':>9}  paper")
    naive = None
    for variant in variants:
        job = GemmJob(variant, dim=dim, threads=threads)
        result, storage, seconds = run(job)
        if variant == "naive":
            naive = result.cycles
        share = shares(result)
        compile_s = result.engine["compile_seconds"]
        print(f"{variant:11} {result.cycles:13,} {share['critical']:10.2f} "
              f"{share['spinning']:10.2f} "
              f"{f'{naive / result.cycles:7.2f}x' if naive else 'n/a':>8} "
              f"{result.ops_per_cycle:9.3f} {result.bytes_per_cycle:8.3f} "
              f"{'yes' if job.matches(storage) else 'NO':>6} {seconds - compile_s:8.1f} "
              f"{compile_s:9.1f}  {PAPER_GEMM.get(variant, '')}", flush=True)


def pi(steps_list, threads, frac_bits):
    print(f"\npi series, {threads} threads, Q.{frac_bits}, compiled engine")
    print(f"{'steps':>11} {'cycles':>12} {'ops/cycle':>9} {'idle %':>7} {'critical %':>10} "
          f"{'spinning %':>10} {'pi':>10} {'numpy':>6} {'sim s':>7}  paper")
    for steps in steps_list:
        job = PiJob(steps=steps, threads=threads, frac_bits=frac_bits)
        result, storage, seconds = run(job)
        share = shares(result)
        print(f"{steps:11,} {result.cycles:12,} {result.ops_per_cycle:9.3f} {share['idle']:7.2f} "
              f"{share['critical']:10.2f} {share['spinning']:10.2f} {job.value(storage):10.6f} "
              f"{'yes' if job.matches(storage) else 'NO':>6} "
              f"{seconds - result.engine['compile_seconds']:7.1f}  {PAPER_PI.get(steps, '')}",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--threads", type=int, default=8)
    # One process per variant runs them side by side on a machine with cores to spare.
    parser.add_argument("--variants", default=",".join(GemmJob.variants))
    parser.add_argument("--pi-steps", default="1000000,4000000,10000000")
    # Millions of steps need the finest step the 32-bit fixed point has (hwgen.programs.PiJob).
    parser.add_argument("--pi-frac-bits", type=int, default=28)
    args = parser.parse_args()
    gemm(args.dim, args.threads, args.variants.split(","))
    pi([int(s) for s in args.pi_steps.split(",")], args.threads, args.pi_frac_bits)


if __name__ == "__main__":
    main()
