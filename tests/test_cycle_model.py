"""The cycle model (hwgen.model) against closed-form counts and against simulation.

Exact cases (no jitter, no backpressure) must match the simulated cycles to the cycle; random
memories are predicted as expected values, within a stated tolerance of one seeded run.
"""

import csv
import gc
import itertools
import json
import math
import re

import numpy as np
import pytest

from hwgen.catalog import resolve_board
from hwgen.cli.main import main
from hwgen.kernels import WindowFilter, window_system
from hwgen.kernels.pipeline import Pipeline
from hwgen.kernels.programs import gemm, pi_series
from hwgen.model import predict_program, predict_window
from hwgen.model.memory import jitter_delay, jitter_max
from hwgen.model.program import program_bounds, program_shape
from hwgen.programs import GemmJob, PiJob
from hwgen.resources.estimate import estimate
from hwgen.resources.synth import synthesize
from hwgen.roofline.fast import explore_fast, explore_program, port_beats, program_jobs
from hwgen.roofline.sweep import DesignPoint
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

def _on_front_as_brute_force(rows):
    """Every row's ``on_front`` against an independent O(n^2) Pareto test: a point is on the
    front unless another has no more LUTs and more Gops/s, or fewer LUTs and as many; of equal
    points, one is on it."""
    points = [(int(r["lut"]), float(r["gops"]), r["on_front"] == "True") for r in rows]
    for lut, gops, on_front in points:
        dominated = any(l <= lut and g > gops or l < lut and g >= gops for l, g, _ in points)
        assert on_front == (not dominated) or (not on_front and any(
            l == lut and g == gops for l, g, f in points if f))
    return [p for p in points if p[2]]


def test_fast_exploration_front_and_outputs(tmp_path, capsys):
    out = tmp_path / "fast"
    assert main(["explore", "dilation", "--fast", "--unroll", "1,2,4", "--buffer", "smart,line",
                 "--pipeline", "both", "--image", "16x8", "--mem-bandwidth", "2",
                 "--max-pes", "2", "--verify", "1", "--no-verify-synth", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (out / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "pareto.csv") as f:
        rows = list(csv.DictReader(f))
    # 3 U x 2 buffers x (2 register policies pipelined + 1 unpipelined) x PE counts 1, 2.
    assert len(rows) == 3 * 2 * 3 * 2
    _on_front_as_brute_force(rows)
    assert "model cycle error: mean" in printed and "best point per area budget" in printed


@pytest.mark.parametrize("args,rows,ops", [
    # nocritical at 1 and 2 threads, vector at 1 and 2 threads x lanes 1, 2, 4: 2 d^3 ops each.
    (["gemm", "--variant", "nocritical,vector", "--threads", "1,2", "--dim", "4"], 2 + 2 * 3,
     lambda r: 2 * 4 ** 3),
    # pi: 5 + (F + 3) ops per step and 2 per thread (its share of the result).
    (["pi", "--threads", "1,2,3", "--steps", "6", "--frac-bits", "8"], 3,
     lambda r: 6 * (5 + 11) + 2 * int(r["threads"])),
])
def test_program_exploration_front_is_the_pareto_front_of_its_points(args, rows, ops, tmp_path,
                                                                     capsys):
    out = tmp_path / "fast"
    assert main(["explore", *args, "--fast", "--verify", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (out / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "pareto.csv") as f:
        found = list(csv.DictReader(f))
    assert len(found) == rows
    for r in found:
        assert int(r["ops"]) == ops(r)
        assert r["lanes"] == ("" if r["variant"] != "vector" else r["lanes"])
    front = _on_front_as_brute_force(found)
    assert f"Pareto front ({len(front)} points)" in printed
    assert f"{rows} design points predicted in" in printed


def test_program_verified_point_is_the_run_of_its_configuration(tmp_path, capsys):
    configuration = ["gemm", "--variant", "vector", "--lanes", "2", "--threads", "2", "--dim",
                     "4", "--mem-latency", "3", "--launch-delay", "5"]
    assert main(["explore", *configuration, "--fast", "--verify", "1", "--no-verify-synth",
                 "--out", str(tmp_path / "fast")]) == 0
    printed = capsys.readouterr().out
    simulated = re.search(r"vector L2, 2 threads: model [\d,]+ cycles, simulated ([\d,]+)",
                          printed)
    report = tmp_path / "run.json"
    assert main(["run", *configuration, "--json", str(report), "-q"]) == 0
    assert int(simulated[1].replace(",", "")) == json.loads(report.read_text())["cycles"]
    assert "model cycle error: mean" in printed and "Yosys" not in printed


def test_program_exploration_skips_what_cannot_fit():
    """On a small device the pi pipeline outgrows it with threads: the first thread count that
    does not fit is estimated and dropped, the larger ones skipped, and each of those is indeed
    too large."""
    board = resolve_board("icebreaker")
    threads = (1, 2, 4, 8, 16)
    found = explore_program(program_jobs(PiJob, {"threads": threads, "steps": [8]}), board)
    kept = [p.job.threads for p in found.points]
    assert found.dropped == 1 and found.estimated + found.from_cache == len(kept) + 1
    assert found.skipped == len(threads) - len(kept) - 1 > 0
    available = board.resources.as_counts()
    for count in threads[len(kept):]:
        pipeline = Pipeline(pi_series(threads=count))
        used = estimate(pipeline, board).resources()
        assert any(used[r] > available[r] for r in used)


@pytest.mark.parametrize("args,option", [
    (["gemm", "--fast", "--variant", "naive", "--lanes", "2"], "--lanes"),
    (["pi", "--fast", "--lanes", "2"], "--lanes"),
    (["gemm", "--fast", "--threads", "0"], "--threads"),
    (["gemm", "--fast", "--threads", "2,65"], "--threads"),
    (["gemm", "--fast", "--variant", "blocked", "--threads", "1"], "--threads"),
    (["gemm", "--fast", "--variant", "vector", "--dim", "4", "--lanes", "3"], "--lanes"),
    (["gemm", "--fast", "--variant", "tiled"], "--variant"),
    (["gemm", "--fast", "--steps", "4"], "--steps"),
    (["pi", "--fast", "--element-bits", "16"], "--element-bits"),
    (["gemm", "--fast", "--unroll", "2"], "--unroll"),
    (["gemm", "--dim", "4"], "--fast"),
    (["dilation", "--fast", "--dim", "4"], "--dim"),
    (["gemm", "--fast", "--launch-delay", "-1"], "--launch-delay"),
    (["pi", "--fast", "--board", "d5005"], "--no-verify-synth"),
])
def test_program_exploration_refuses_bad_options(args, option, tmp_path, capsys):
    out = tmp_path / "fast"
    assert main(["explore", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert option in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_verified_points_are_synthesized_as_they_are_described(tmp_path, capsys):
    """The LUTs a verified point prints are Yosys's for the very hardware it describes: a
    program's bare pipeline, a kernel point's bare system of its PEs."""
    board = resolve_board("ulx3s-85f")
    assert main(["explore", "gemm", "--variant", "nocritical", "--threads", "1", "--dim", "2",
                 "--fast", "--verify", "1", "--out", str(tmp_path / "gemm")]) == 0
    assert main(["explore", "dilation", "--unroll", "1", "--buffer", "line", "--image", "8x6",
                 "--max-pes", "2", "--mem-bandwidth", "0.5", "--fast", "--verify", "2",
                 "--out", str(tmp_path / "dilation")]) == 0
    printed = capsys.readouterr().out
    yosys = {label: (int(e.replace(",", "")), int(y.replace(",", "")))
             for label, e, y in re.findall(r"  (.+?): model .*; estimate ([\d,]+) LUT, Yosys "
                                           r"([\d,]+) ", printed)}
    pipeline = Pipeline(gemm("nocritical", dim=2, threads=1))
    assert yosys["nocritical, 1 thread"] == (
        estimate(pipeline, board).lut, synthesize(pipeline, board, fmax=False).lut)
    with open(tmp_path / "dilation" / "pareto.csv") as f:
        rows = {r["label"]: r for r in csv.DictReader(f)}
    verified = [label for label in yosys if label in rows]
    assert len(verified) == 2
    for label in verified:
        pes, tree_stages = int(rows[label]["pes"]), rows[label]["tree_stages"]
        system = window_system(pes, width=8, height=6, op="max", unroll=1, buffer="line",
                               tree_stages=tree_stages)
        assert yosys[label] == (int(rows[label]["lut"]), synthesize(system, board, fmax=False).lut)
    assert "estimate LUT error: mean" in printed


def test_pes_on_shared_channels_are_predicted_by_the_channel_s_beats():
    """Five line-buffered PEs each want a read beat per cycle; a link of 4 bytes per cycle is
    two channels of U2's 2-byte beats, the busier serving three PEs: the explorer predicts
    the larger of three frames' beats and the link's cycles, as the simulated system takes.
    With an unlimited link each PE has its own channel and the system takes one frame's."""
    point = DesignPoint("dilation", 3, 3, "rect", 32, 16, 2, "line", True)
    beats = 32 * 16 // 2        # a line buffer reads every pixel once, two to a beat
    assert port_beats(point.build()) == beats
    for memory in (MemoryModel(), MemoryModel(bandwidth_bytes_per_cycle=4)):
        found = explore_fast([point], resolve_board("ulx3s-85f"), memory,
                             tree_policies=("lean",), max_pes=5)
        system = next(p for p in found if p.pes == 5)
        if memory.bandwidth_bytes_per_cycle is None:
            assert system.bound != "port" and system.cycles < 1.2 * beats
        else:
            link_cycles = 5 * (32 * 16 + 30 * 14) / 4
            assert system.cycles >= max(3 * beats, link_cycles) * 0.99
        simulated = system.simulate(memory, engine="pysim")
        assert abs(system.cycles - simulated) / simulated < 0.05
