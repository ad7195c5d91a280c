"""A histogram on the multithreaded pipeline: a pipeline program written outside hwgen.

Each hardware thread takes the elements ``i = tid, tid + T, ...`` of an array of 8-bit values,
computes the bin of each (its top bits) and, inside a critical section, adds one to that bin's
count in memory. ``Histogram`` is a :class:`hwgen.kernels.pipeline.Job`: hwgen's commands take it
as ``examples/histogram.py:Histogram`` with no edit of hwgen (docs/tutorial-program.md).

Run ``python examples/histogram.py`` (from any folder): it simulates a job, checks the result
against ``numpy.bincount``, sets the cycle model against the simulation, and runs the job
through ``hwgen run``, ``profile``, ``estimate``, ``explore --fast``, ``roofline`` and
``report``; the exit status is 0 only when every check holds.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from amaranth.hdl import unsigned

from hwgen.kernels.pipeline import (Acquire, Compute, Job, Load, Lock, Option, ProgramShape,
                                    Program, Release, Store, While)
from hwgen.kernels.pipeline.job import share

__all__ = ["Histogram"]

#: Bits of an input value.
VALUE_BITS = 8


class Histogram(Job):
    """Counts of ``n`` random 8-bit values in ``bins`` equal bins, at ``n .. n + bins - 1``."""
    name = "histogram"
    description = "histogram of random 8-bit values, one locked update per element"
    options = (
        Option("n", int, 64, "values to count (a run-time parameter)", low=1, high=30000,
               hardware=False),
        Option("bins", int, 16, "bins, a power of two", low=2, high=256),
        Option("threads", int, 4, "hardware threads", low=1, high=64),
        Option("seed", int, 0, "seed of the values", low=0, hardware=False),
    )

    def check(self):
        if self.bins & (self.bins - 1):
            raise ValueError(f"bins must be a power of two, not {self.bins}")

    @classmethod
    def build_program(cls, *, bins, threads):
        shift = VALUE_BITS - (bins - 1).bit_length()
        lock = Lock("bins")
        return Program(
            "histogram", threads=threads, element_bits=32, addr_width=16,
            context={"i": unsigned(16), "x": unsigned(32), "bin": unsigned(8),
                     "count": unsigned(32)},
            params={"x_base": unsigned(16), "hist_base": unsigned(16), "n": unsigned(16)},
            body=[
                Compute(lambda c, p: {"i": c.tid}, name="first index"),
                While(lambda c, p: c.i < p.n, [
                    Load(lambda c, p: p.x_base + c.i, into="x", name="load x"),
                    Compute(lambda c, p: {"bin": c.x[shift:VALUE_BITS], "i": c.i + threads},
                            ops=1, name="bin"),
                    Acquire(lock),
                    Load(lambda c, p: p.hist_base + c.bin, into="count", name="load count"),
                    Compute(lambda c, p: {"count": c.count + 1}, ops=1, name="count"),
                    Store(lambda c, p: p.hist_base + c.bin, lambda c, p: c.count,
                          name="store count"),
                    Release(lock),
                ]),
            ])

    @property
    def values(self):
        return np.random.default_rng(self.seed).integers(0, 1 << VALUE_BITS, self.n)

    def memory(self):
        storage = [int(v) for v in self.values] + [0] * self.bins
        return storage, {"x_base": 0, "hist_base": self.n, "n": self.n}

    def expected(self):
        return np.bincount(self.values >> (VALUE_BITS - (self.bins - 1).bit_length()),
                           minlength=self.bins)

    def result(self, storage):
        return np.array(storage[self.n:self.n + self.bins])

    def shape(self):
        # Per element: load, bin, then the critical section (acquire, load, count, store,
        # release); the loop starts with a parking stage, so no join heads it.
        section = {"load": 1, "compute": 1, "store": 1, "release": 1}
        paths = tuple({"compute": 1 + 2 * k, "load": 2 * k, "acquire": k, "store": k,
                       "release": k}
                      for k in (share(self.n, t, self.threads) for t in range(self.threads)))
        return ProgramShape("histogram", paths, read_beats=2 * self.n, write_beats=self.n,
                            bytes_read=8 * self.n, bytes_written=4 * self.n, ops=2 * self.n,
                            sections=self.n, section=section)


def _hwgen(*args):
    """``python -m hwgen ARGS`` with this file's Histogram; its output, or exit on failure."""
    command = [sys.executable, "-m", "hwgen", args[0], f"{Path(__file__).resolve()}:Histogram",
               *args[1:]]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(command)}\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    from hwgen.model import predict_program
    from hwgen.resources import estimate
    from hwgen.kernels.pipeline import Pipeline
    from hwgen.sim import HostModel, MemoryModel, run_threads

    failures = []
    # From Python: simulate, check against numpy, predict.
    job = Histogram(n=96, bins=8, threads=4, seed=1)
    storage, params = job.memory()
    host, memory = HostModel(launch_delay_cycles=4), MemoryModel(latency_cycles=2)
    run = run_threads(Pipeline(job.program), storage, params=params, host=host, memory=memory,
                      max_cycles=job.cycle_budget(memory, host))
    if not job.matches(storage):
        failures.append(f"histogram {job.result(storage)} != numpy {job.expected()}")
    predicted = predict_program(job, memory, host).cycles
    error = predicted / run.cycles - 1
    print(f"python: {job.describe()}: {run.cycles} cycles simulated, {predicted:.0f} predicted "
          f"({error:+.1%}); result {'matches' if job.matches(storage) else 'DIFFERS FROM'} numpy")
    if abs(error) > 0.15:
        failures.append(f"cycle model {error:+.1%} off the simulation")
    resources = estimate(Pipeline(job.program), "ulx3s-85f", name="histogram")
    print(f"python: estimate {resources.lut} LUT, {resources.ff} FF on ulx3s-85f")

    # From the command line, the same class named by its file.
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        _hwgen("run", "--n", "64", "--bins", "8", "--threads", "2", "--json",
               str(out / "run.json"), "-q")
        report = json.loads((out / "run.json").read_text())
        if not report["result_matches_numpy_model"]:
            failures.append("hwgen run: the result does not match numpy")
        print(f"hwgen run: {report['cycles']} cycles, result matches numpy: "
              f"{report['result_matches_numpy_model']}")
        _hwgen("profile", "--n", "32", "--bins", "4", "--threads", "2", "--json",
               str(out / "profile.json"), "-q")
        print("hwgen profile: wrote", json.loads((out / "profile.json").read_text())["title"])
        print("hwgen estimate:", _hwgen("estimate", "--n", "64", "--bins", "8").splitlines()[1])
        explored = _hwgen("explore", "--fast", "--bins", "8,16", "--threads", "1,2,4",
                          "--verify", "1", "--no-verify-synth", "--out", str(out / "explore"))
        print("hwgen explore --fast:", explored.splitlines()[0])
        # The roofline: one pipeline per PE, the best job simulated against the cycle model.
        best = _hwgen("roofline", "--n", "64", "--bins", "8", "--threads", "1,2,4", "--confirm",
                      "--engine", "pysim", "--out", str(out / "roofline"), "-q")
        print("hwgen roofline:", best.splitlines()[0])
        confirm = json.loads((out / "roofline" / "confirm.json").read_text())
        if any(confirm["errors"][name] for name in ("ops", "bytes_read", "bytes_written")):
            failures.append(f"hwgen roofline: ops or traffic differ from the simulation's: "
                            f"{confirm['errors']}")
        if abs(confirm["errors"]["cycles"]) > 0.15:
            failures.append(f"hwgen roofline: the cycle model is "
                            f"{confirm['errors']['cycles']:+.1%} off the simulation")
        _hwgen_report = subprocess.run(
            [sys.executable, "-m", "hwgen", "report", str(out / "run.json"), "--out",
             str(out / "run.html"), "-q"], capture_output=True, text=True)
        if _hwgen_report.returncode != 0 or not (out / "run.html").exists():
            failures.append(f"hwgen report failed: {_hwgen_report.stderr}")
        else:
            print("hwgen report: wrote a page of", (out / "run.html").stat().st_size, "bytes")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
