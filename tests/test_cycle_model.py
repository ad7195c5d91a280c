"""The cycle model (hwgen.model) against closed-form counts and against simulation.

Exact cases (no jitter, no backpressure) must match the simulated cycles to the cycle; random
memories are predicted as expected values, within a stated tolerance of one seeded run.
"""

import csv
import gc
import itertools
import json
import math

import numpy as np
import pytest

from hwgen.cli.main import main
from hwgen.kernels import WindowFilter
from hwgen.kernels.pipeline import Pipeline
from hwgen.model import predict_program, predict_window
from hwgen.model.memory import jitter_delay, jitter_max
from hwgen.model.program import program_bounds, program_shape
from hwgen.programs import GemmJob, PiJob
from hwgen.sim import MemoryModel, run_threads, run_window_filter

# One seeded run of a short frame against an expectation: the run's own spread.
RANDOM_TOLERANCE = 0.10


def _simulate(pe, memory):
    image = np.random.default_rng(0).integers(0, 1 << pe.pixel_bits, (pe.height, pe.width))
    return run_window_filter(pe, image, memory=memory, instrument=False).figures.cycles


@pytest.mark.parametrize("buffer,unroll", [("line", 1), ("line", 4), ("smart", 2), ("none", 3)])
def test_ideal_memory_closed_form(buffer, unroll):
    """With an ideal memory a pipelined PE issues one beat per cycle: every read beat, plus the
    reduction's registers and three cycles of fill, write and done."""
    pe = WindowFilter("max", (3, 3), width=12, height=6, unroll=unroll, buffer=buffer)
    beats = {"line": 6 * 12 // unroll,
             "smart": math.ceil(4 / unroll) * 12,
             "none": 9 * 4 * math.ceil(10 / unroll)}[buffer]
    prediction = predict_window(pe)
    assert prediction.cycles == beats + pe.datapath_latency + 3
    assert prediction.exact and prediction.stall_share == 0


def test_latency_adds_once_while_credits_last():
    pe = WindowFilter("max", (3, 3), width=12, height=6, buffer="line")
    for latency in (2, 5, 8):
        cycles = predict_window(pe, MemoryModel(latency_cycles=latency)).cycles
        assert cycles == 6 * 12 + pe.datapath_latency + 3 + latency - 1


@pytest.mark.parametrize("kwargs,memory", [
    (dict(buffer="line", unroll=1), MemoryModel(latency_cycles=20)),             # credits bound
    (dict(buffer="smart", unroll=1), MemoryModel(latency_cycles=24)),
    (dict(buffer="none", unroll=2), MemoryModel(latency_cycles=6)),
    (dict(buffer="line", unroll=2, pipeline=False), MemoryModel(latency_cycles=3)),
    (dict(buffer="smart", unroll=1, pipeline=False), MemoryModel(0.5, latency_cycles=2)),
    (dict(buffer="none", unroll=1), MemoryModel(0.5)),                           # bandwidth bound
])
def test_exact_against_simulation(kwargs, memory):
    pe = WindowFilter("max", (3, 3), width=12, height=6, **kwargs)
    assert predict_window(pe, memory).cycles == pytest.approx(_simulate(pe, memory), abs=1)


@pytest.mark.parametrize("kwargs,memory", [
    (dict(buffer="line", unroll=2), MemoryModel(latency_cycles=4, jitter_cycles=4, seed=3)),
    (dict(buffer="smart", unroll=1), MemoryModel(backpressure=0.2, seed=5)),
    (dict(buffer="none", unroll=2, pipeline=False), MemoryModel(jitter_cycles=3, seed=1)),
])
def test_random_memory_within_tolerance(kwargs, memory):
    pe = WindowFilter("max", (3, 3), width=12, height=8, **kwargs)
    prediction = predict_window(pe, memory)
    assert not prediction.exact
    simulated = _simulate(pe, memory)
    assert abs(prediction.cycles - simulated) <= RANDOM_TOLERANCE * simulated


def test_jitter_expectations_by_enumeration():
    """Expected in-order delay and burst maximum, against enumerating every draw: requests
    ``gap`` cycles apart and responses one per cycle, so an earlier response ``i`` places back
    holds this one by its jitter less ``i (gap - 1)``."""
    jitter = 3
    draws = list(itertools.product(range(jitter + 1), repeat=3))
    for gap in (1, 2, 3):
        delay = sum(max(j - i * (gap - 1) for i, j in enumerate(d)) for d in draws) / len(draws)
        assert jitter_delay(jitter, gap, 3) == pytest.approx(delay)
    assert jitter_max(jitter, 3) == pytest.approx(sum(max(d) for d in draws) / len(draws))


def test_figures_of_a_prediction():
    pe = WindowFilter("max", (3, 3), width=12, height=6, buffer="line")
    slow = predict_window(pe, MemoryModel(0.5))
    traffic = pe.traffic()
    assert slow.bound == "bandwidth"
    assert slow.ops_per_cycle == traffic.ops / slow.cycles
    assert slow.bytes_per_cycle == pytest.approx(
        (traffic.bytes_read + traffic.bytes_written) / slow.cycles)
    assert slow.bytes_per_cycle <= 0.5 * 1.05
    assert slow.stall_share == pytest.approx(1 - pe.ideal_cycles() / slow.cycles)
    assert slow.milliseconds(100) == pytest.approx(slow.cycles / 1e5)
    assert slow.milliseconds(None) is None
    assert slow.to_json(100)["milliseconds"] == slow.milliseconds(100)


# -- pipeline programs ---------------------------------------------------------------------------

# A program's cycles come from fitted factors (hwgen/model/characterisation.json): within this
# of one simulated job.
PROGRAM_TOLERANCE = 0.10


@pytest.mark.parametrize("job", [
    GemmJob("naive", dim=3, threads=2), GemmJob("nocritical", dim=3, threads=3),
    GemmJob("vector", dim=4, threads=2, lanes=2), GemmJob("blocked", dim=4, threads=3, lanes=2),
    PiJob(steps=20, threads=2),
], ids=lambda job: job.program.name)
def test_program_against_simulation(job):
    """Work and traffic counted from the program's structure are exact; cycles are close."""
    storage, params = job.memory()
    run = run_threads(Pipeline(job.program), storage, params=params)
    prediction = predict_program(job)
    assert (prediction.ops, prediction.bytes_read, prediction.bytes_written) == (
        run.ops, run.bytes_read, run.bytes_written)
    assert abs(prediction.cycles - run.cycles) <= PROGRAM_TOLERANCE * run.cycles


def test_program_bounds_follow_the_memory():
    job = GemmJob("nocritical", dim=8, threads=4)
    shape = program_shape(job)
    fast = program_bounds(shape)
    slow = program_bounds(shape, MemoryModel(latency_cycles=11))
    # Every load of the busiest thread (two per multiply-add, 2 x 8 x 8 x 2 rows) waits 10 more.
    assert slow["chain"] - fast["chain"] == 10 * 2 * 8 * 8 * 2
    assert slow["read port"] == fast["read port"] == 2 * 8 ** 3
    narrow = program_bounds(shape, MemoryModel(2.0))
    assert narrow["bandwidth"] == (2 * 8 ** 3 + 8 ** 2) * 4 / 2.0


# -- the estimate command ------------------------------------------------------------------------

def test_estimate_command_predicts_cycles(tmp_path, capsys):
    path = tmp_path / "e.json"
    assert main(["estimate", "dilation", "--buffer", "line", "--width", "64", "--height", "16",
                 "--mem-latency", "4", "--no-instrument", "--json", str(path), "-q"]) == 0
    report = json.loads(path.read_text())
    pe = WindowFilter("max", (3, 3), width=64, height=16, buffer="line", tree_stages="fast")
    assert report["cycles"] == 64 * 16 + pe.datapath_latency + 3 + 3
    assert report["ops_per_cycle"] == pytest.approx(8 * 62 * 14 / report["cycles"])
    assert report["memory"]["latency_cycles"] == 4
    assert report["prediction"]["milliseconds"] == pytest.approx(
        report["cycles"] / (report["prediction"]["clock_mhz"] * 1e3))


def test_estimate_command_takes_a_program(tmp_path, capsys):
    path = tmp_path / "p.json"
    assert main(["estimate", "gemm", "--variant", "vector", "--dim", "8", "--threads", "2",
                 "--lanes", "4", "--no-instrument", "--json", str(path), "-q"]) == 0
    report = json.loads(path.read_text())
    assert report["program"] == "gemm" and report["parameters"]["variant"] == "vector"
    assert report["cycles"] > 0 and report["prediction"]["ops"] == 2 * 8 ** 3


def test_estimate_of_a_system_says_its_cycles_are_not_predicted(tmp_path, capsys):
    """The model predicts one PE; a system's shared port is not modelled: null, not a guess."""
    path = tmp_path / "s.json"
    assert main(["estimate", "dilation", "--pes", "2", "--width", "32", "--height", "8",
                 "--json", str(path)]) == 0
    assert "cycles n/a" in capsys.readouterr().out
    report = json.loads(path.read_text())
    assert report["cycles"] is None and report["prediction"] is None and report["lut"] > 0


def test_estimate_of_an_instrumented_program_builds_its_hmm_once(recwarn):
    gc.collect()
    recwarn.clear()     # what earlier tests left behind
    assert main(["estimate", "pi", "--steps", "16", "--threads", "2", "-q"]) == 0
    gc.collect()        # an unused elaboratable warns when it is collected
    assert not [w for w in recwarn if "UnusedElaboratable" in type(w.message).__name__]


@pytest.mark.parametrize("args,message", [
    (["dilation", "--mem-latency", "0"], "--mem-latency"),
    (["gemm", "--dim", "0"], "--dim"),
    (["pi", "--launch-delay", "-1"], "--launch-delay"),
])
def test_estimate_command_refuses_bad_options(args, message, capsys):
    assert main(["estimate", *args]) == 2
    assert message in capsys.readouterr().err


# -- explore --fast ------------------------------------------------------------------------------

def test_fast_exploration_front_and_outputs(tmp_path, capsys):
    out = tmp_path / "fast"
    assert main(["explore", "dilation", "--fast", "--unroll", "1,2,4", "--buffer", "smart,line",
                 "--pipeline", "both", "--image", "16x8", "--mem-bandwidth", "2",
                 "--max-pes", "2", "--verify", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (out / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "pareto.csv") as f:
        rows = list(csv.DictReader(f))
    # 3 U x 2 buffers x (2 register policies pipelined + 1 unpipelined) x PE counts 1, 2.
    assert len(rows) == 3 * 2 * 3 * 2
    points = [(int(r["lut"]), float(r["gops"]), r["on_front"] == "True") for r in rows]
    for lut, gops, on_front in points:
        dominated = any(l <= lut and g > gops or l < lut and g >= gops for l, g, _ in points)
        assert on_front == (not dominated) or (not on_front and any(
            l == lut and g == gops for l, g, f in points if f))
    assert "model error: mean" in printed and "best point per area budget" in printed
