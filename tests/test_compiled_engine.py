"""The compiled engine against Amaranth's simulator: the same design, inputs and memory seed give
the same outputs, cycle data, HMM values, trace records and memory traffic in both.

Every design here is compiled once per machine (the model cache), which costs seconds each: the
default suite covers every buffer, a system and one pipeline program; the slow set the rest.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import reference as ref
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import (HostModel, MemoryModel, instrument_pe, instrument_pipeline,
                       run_threads, run_window_filter, run_window_system, window_system)
from hwgen.sim.compiled import CompiledModel, EngineUnavailable, check_available
from hwgen.sim.engine import EngineNotice, resolve_engine
from hwgen.sim.random_stream import RandomStream


def _random_config(seed):
    """A window filter and a memory model drawn from ``seed``, over the whole parameter space."""
    rng = np.random.default_rng(seed)
    buffer = ["none", "smart", "line"][seed % 3]
    rows, cols = [(3, 3), (1, 3), (3, 1), (5, 3), (2, 2), (3, 5)][rng.integers(6)]
    width = int(rng.integers(max(cols, 6), 20))
    height = int(rng.integers(max(rows, 4), 12))
    if buffer == "line":
        unroll = int(rng.choice([u for u in (1, 2, 3, 4) if width % u == 0]))
    elif buffer == "smart":
        unroll = int(rng.integers(1, min(4, height - rows + 1) + 1))
    else:
        unroll = int(rng.integers(1, min(3, width - cols + 1) + 1))
    mask = ["rect", "cross", "ellipse"][rng.integers(3)]
    pixel_bits = int(rng.choice([1, 5, 8, 12, 16]))
    pe = WindowFilter(["max", "min"][seed % 2], (rows, cols), mask=mask, pixel_bits=pixel_bits,
                      width=width, height=height, unroll=unroll, buffer=buffer)
    memory = MemoryModel(
        bandwidth_bytes_per_cycle=[None, 1.5, 3.25, 0.7][rng.integers(4)],
        latency_cycles=int(rng.integers(1, 7)), jitter_cycles=int(rng.integers(0, 4)),
        backpressure=float(rng.choice([0.0, 0.1, 0.3])), seed=int(rng.integers(1 << 32)))
    image = rng.integers(0, 1 << pixel_bits, size=(height, width))
    return pe, memory, image


def _both_engines(make, run):
    """``run(design, engine)`` on a fresh ``make()`` in each engine."""
    return run(make(), "pysim"), run(make(), "compiled")


def _assert_same_window_run(a, b):
    assert (a.image == b.image).all()
    assert a.figures == b.figures            # every figure and every HMM value and trace
    assert a.traffic == b.traffic            # what the memory saw, addresses included
    assert (a.engine["name"], b.engine["name"]) == ("pysim", "compiled")


def _window_case(seed, instrument=True):
    pe, memory, image = _random_config(seed)
    params = pe.parameters()

    def make():
        fresh = WindowFilter(params["op"], (params["rows"], params["cols"]), mask=params["mask"],
                             pixel_bits=params["pixel_bits"], width=params["width"],
                             height=params["height"], unroll=params["unroll"],
                             buffer=params["buffer"])
        return instrument_pe(fresh) if instrument else fresh

    a, b = _both_engines(make, lambda design, engine: run_window_filter(
        design, image, memory=memory, record_addresses=True, instrument=instrument,
        engine=engine))
    _assert_same_window_run(a, b)
    op = params["op"]
    assert (b.image == ref.window_filter(image, pe.mask, op)).all()


@pytest.mark.parametrize("seed", range(3))
def test_window_filters_are_identical_in_both_engines(seed):
    _window_case(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 15))
def test_more_window_filters_are_identical_in_both_engines(seed):
    _window_case(seed)


def test_a_bare_pe_is_identical_in_both_engines():
    _window_case(20, instrument=False)


def test_a_traced_run_drains_the_same_records_in_both_engines():
    pe, memory, image = _random_config(4)
    params = pe.parameters()

    def make():
        return instrument_pe(WindowFilter(params["op"], (params["rows"], params["cols"]),
                                          pixel_bits=params["pixel_bits"],
                                          width=params["width"], height=params["height"],
                                          unroll=params["unroll"], buffer=params["buffer"]),
                             timeline_depth=16)

    # A shallow timeline drained every few cycles: records are taken while the job runs and
    # some are dropped, both counted exactly.
    a, b = _both_engines(make, lambda design, engine: run_window_filter(
        design, image, memory=memory, drain_interval_cycles=7, engine=engine))
    _assert_same_window_run(a, b)
    assert a.figures.hmm.traces["timeline"]


def test_a_system_of_pes_sharing_the_memory_is_identical_in_both_engines():
    rng = np.random.default_rng(7)
    # Enough PEs that the default probes keep their bytes and ops in tables.
    images = [rng.integers(0, 256, (9, 16)) for _ in range(4)]
    memory = MemoryModel(bandwidth_bytes_per_cycle=2.5, latency_cycles=4, jitter_cycles=2,
                         backpressure=0.1, seed=11)

    def make():
        return window_system(4, width=16, height=9, unroll=2, buffer="smart")

    a, b = _both_engines(make, lambda pes, engine: run_window_system(pes, images, memory=memory,
                                                                     engine=engine))
    assert all((x == y).all() for x, y in zip(a.images, b.images))
    assert a.per_pe == b.per_pe and a.cycles == b.cycles
    for image, out in zip(images, b.images):
        assert (out == ref.window_filter(image, np.ones((3, 3), bool), "max")).all()


def _program_case(job, memory):
    host = HostModel(launch_delay_cycles=5, drain_interval_cycles=32)
    runs = {}
    for engine in ("pysim", "compiled"):
        storage, params = job.memory()
        design = instrument_pipeline(Pipeline(job.program), sample_period=16, state_depth=64)
        runs[engine] = run_threads(design, storage, params=params, host=host, memory=memory,
                                   engine=engine), storage
    (a, sa), (b, sb) = runs["pysim"], runs["compiled"]
    assert sa == sb and job.matches(sb)
    assert a.readout == b.readout            # values, tables and every drained record
    assert a.launch_cycles == b.launch_cycles and a.timeline == b.timeline
    assert a.cycles == b.cycles and a.ops == b.ops


def test_pi_is_identical_in_both_engines():
    _program_case(PiJob(steps=40, threads=4),
                  MemoryModel(latency_cycles=3, jitter_cycles=2, backpressure=0.1, seed=5))


@pytest.mark.slow
@pytest.mark.parametrize("variant", GemmJob.variants)
def test_every_gemm_variant_is_identical_in_both_engines(variant):
    _program_case(GemmJob(variant, dim=4, threads=4, seed=3),
                  MemoryModel(bandwidth_bytes_per_cycle=6.5, latency_cycles=5, jitter_cycles=3,
                              backpressure=0.05, seed=8))


def test_the_random_stream_is_splitmix64():
    # The first outputs of SplitMix64 from state 0, as published with the algorithm.
    stream = RandomStream(0)
    assert [stream.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                                 0x06C45D188009454F]
    assert 0 <= RandomStream(1).uniform() < 1
    assert {RandomStream(s).below(3) for s in range(50)} == {0, 1, 2}


def test_a_model_compiles_once_and_changes_with_the_design():
    first, info = CompiledModel.build(WindowFilter("max", (3, 3), width=8, height=6))
    again, info_again = CompiledModel.build(WindowFilter("max", (3, 3), width=8, height=6))
    assert again is first and info_again.cached and info_again.compile_seconds == 0.0
    assert info_again.path == info.path
    _, other = CompiledModel.build(WindowFilter("max", (3, 3), width=8, height=7))
    assert other.path != info.path


def test_the_compiled_engine_writes_a_waveform(tmp_path):
    pe = WindowFilter("max", (3, 3), width=8, height=5)
    image = np.arange(40).reshape(5, 8) % 256
    run = run_window_filter(pe, image, vcd=tmp_path / "run.vcd", engine="compiled")
    text = (tmp_path / "run.vcd").read_text()
    for name in ("clk", "ctrl__busy", "rd_req__valid", "wr_req__payload", "hmm__rdata"):
        assert f" {name} $end" in text
    # Two samples per cycle: the values at the edge, and after it.
    times = [int(line[1:]) for line in text.splitlines() if line.startswith("#")]
    assert max(times) >= run.figures.total_cycles * 10000


def test_monitors_need_amaranths_simulator():
    pe = WindowFilter("max", (3, 3), width=8, height=5)

    async def monitor(ctx):
        pass

    with pytest.raises(ValueError, match="engine='pysim'"):
        run_window_filter(pe, np.zeros((5, 8), int), monitors=[monitor], engine="compiled")


def test_without_a_compiler_the_default_falls_back_with_a_notice(monkeypatch):
    monkeypatch.delenv("HWGEN_ENGINE", raising=False)
    monkeypatch.setenv("CXX", "")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EngineUnavailable, match="C\\+\\+ compiler"):
        check_available()
    with pytest.warns(EngineNotice, match="Amaranth's simulator"):
        assert resolve_engine(None) == "pysim"
    with pytest.raises(EngineUnavailable):
        resolve_engine("compiled")


def test_the_default_engine_is_auto_where_a_compiler_is(monkeypatch):
    monkeypatch.delenv("HWGEN_ENGINE", raising=False)
    assert resolve_engine(None) == "auto"
    monkeypatch.setenv("HWGEN_ENGINE", "pysim")
    assert resolve_engine(None) == "pysim"


def test_asking_for_the_compiled_engine_without_a_compiler_is_one_line(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path), CXX="")
    result = subprocess.run([sys.executable, "-m", "hwgen", "sim", "dilation", "--width", "8",
                             "--height", "5", "--engine", "compiled"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "C++ compiler" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_design_with_another_clock_domain_is_refused():
    """The clock loop drives ``sync`` alone: a second domain would never tick, so it is refused."""
    from amaranth.hdl import ClockDomain, Module
    from amaranth.lib import wiring
    from amaranth.lib.wiring import Out

    class TwoClocks(wiring.Component):
        count: Out(8)

        def elaborate(self, platform):
            m = Module()
            m.domains.pixel = ClockDomain()
            m.d.pixel += self.count.eq(self.count + 1)
            return m

    with pytest.raises(ValueError, match="sync domain alone"):
        CompiledModel.build(TwoClocks())
