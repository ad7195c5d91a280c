# amaranth: UnusedElaboratable=no
"""Line-activity counters in an HMM against the non-intrusive profile of the same simulation:
the same count for every line, on window filters and on every GEMM variant."""

import numpy as np
import pytest

from hwgen.instrument import attach, line_probes, pe_probes, pipeline_probes
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob
from hwgen.sim import LineProfiler, MemoryModel, run_threads, run_window_filter


def simulated_counts(profilers):
    return {(line.file, line.line): line.active_cycles for line in profilers[0].profile().lines}


@pytest.mark.parametrize("buffer, unroll", [("line", 2), ("smart", 1)])
def test_window_filter_line_counters_equal_the_simulation_profile(buffer, unroll):
    pe = WindowFilter("max", (3, 3), mask="cross", width=8, height=6, unroll=unroll,
                      buffer=buffer)
    counters = line_probes(pe, enable=pe.ctrl.busy)
    design = attach(pe, [*pe_probes(pe), *counters.probes])
    profilers = []
    image = np.random.default_rng(1).integers(0, 256, (6, 8))
    run = run_window_filter(design, image, engine="pysim",
                            memory=MemoryModel(bandwidth_bytes_per_cycle=3, latency_cycles=2),
                            on_simulator=lambda sim: profilers.append(
                                LineProfiler(sim, pe, enable=pe.ctrl.busy)))
    hardware = counters.counts(run.figures.hmm)
    assert hardware == simulated_counts(profilers)
    # The busiest lines are active in every busy cycle, the write line once per output beat.
    assert max(hardware.values()) == run.figures.cycles
    writes = [n for (file, line), n in hardware.items() if file.endswith("kernels/window.py")
              and "a result beat is written" in open(file).read().splitlines()[line - 1]]
    assert writes == [pe.out_width * pe.out_height // unroll]


@pytest.mark.parametrize("variant", ["naive", "nocritical", "vector", "blocked"])
def test_gemm_line_counters_equal_the_simulation_profile(variant):
    vector = {"lanes": 2} if variant in ("vector", "blocked") else {}
    job = GemmJob(variant, dim=4, threads=3, **vector)
    pe = Pipeline(job.program)
    counters = line_probes(pe, enable=pe.ctrl.busy)
    design = attach(pe, [*pipeline_probes(pe), *counters.probes], word_bits=64)
    storage, params = job.memory()
    profilers = []
    run = run_threads(design, storage, params=params, engine="pysim",
                      on_simulator=lambda sim: profilers.append(
                          LineProfiler(sim, pe, enable=pe.ctrl.busy)))
    assert job.matches(storage)
    hardware = counters.counts(run.readout)
    assert hardware == simulated_counts(profilers)
    assert max(hardware.values()) == run.cycles
