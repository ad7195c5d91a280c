"""How close the cycle models are for the two worked examples written outside hwgen
(``examples/histogram.py``, ``examples/sobel.py``), against simulation.

The histogram is a pipeline program the characterisation never saw: the program model runs on
its stated default factors. The Sobel PE brings its own cycle model. Each configuration is
simulated with Amaranth's simulator (small jobs, no compiling) and printed beside the model,
then the mean and largest absolute error.

    python benchmarks/example_models.py
"""

import statistics
import sys
from pathlib import Path

import numpy as np

from hwgen.discovery import load_spec
from hwgen.kernels.pipeline import Pipeline
from hwgen.model import predict_program, predict_window
from hwgen.sim import HostModel, MemoryModel, run_threads, run_window_filter

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: (n, bins, threads, memory latency, launch delay)
HISTOGRAMS = [(48, 4, 1, 1, 0), (64, 8, 2, 1, 4), (64, 16, 4, 3, 4), (96, 8, 8, 2, 10),
              (80, 32, 3, 6, 2), (120, 4, 6, 1, 20), (40, 8, 5, 4, 0), (128, 64, 8, 8, 8)]
#: (width, height, memory latency, bandwidth in bytes per cycle or None)
SOBELS = [(8, 5, 1, None), (12, 8, 3, None), (16, 6, 6, None), (12, 8, 1, 1.0)]


def main():
    histogram = load_spec(f"{EXAMPLES / 'histogram.py'}:Histogram", "PROGRAM")
    sobel = load_spec(f"{EXAMPLES / 'sobel.py'}:SobelMagnitude", "KERNEL")
    errors = {"histogram": [], "sobel": []}
    for n, bins, threads, latency, delay in HISTOGRAMS:
        job = histogram(n=n, bins=bins, threads=threads, seed=1)
        storage, params = job.memory()
        host, memory = HostModel(launch_delay_cycles=delay), MemoryModel(latency_cycles=latency)
        run = run_threads(Pipeline(job.program), storage, params=params, host=host,
                          memory=memory, max_cycles=job.cycle_budget(memory, host),
                          engine="pysim")
        assert job.matches(storage), job.describe()
        predicted = predict_program(job, memory, host)
        error = 100 * (predicted.cycles / run.cycles - 1)
        errors["histogram"].append(abs(error))
        print(f"histogram n {n:3} bins {bins:2} T {threads} latency {latency} launch {delay:2}: "
              f"sim {run.cycles:5} model {predicted.cycles:8.1f} {error:+6.2f}% "
              f"(bound {predicted.bound})", flush=True)
    for width, height, latency, bandwidth in SOBELS:
        pe = sobel(width=width, height=height)
        image = np.random.default_rng(0).integers(0, 256, (height, width))
        memory = MemoryModel(bandwidth, latency_cycles=latency)
        run = run_window_filter(pe, image, memory=memory, engine="pysim", instrument=False)
        assert (run.image == pe.reference(image)).all()
        predicted = predict_window(pe, memory)
        error = 100 * (predicted.cycles / run.figures.cycles - 1)
        errors["sobel"].append(abs(error))
        print(f"sobel {width}x{height} latency {latency} bandwidth {bandwidth}: sim "
              f"{run.figures.cycles:5} model {predicted.cycles:8.1f} {error:+6.2f}% "
              f"(bound {predicted.bound})", flush=True)
    for name, found in errors.items():
        print(f"{name}: {len(found)} configurations, mean |error| {statistics.mean(found):.2f}%, "
              f"max {max(found):.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
