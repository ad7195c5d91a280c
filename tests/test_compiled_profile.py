"""Profile-guided models of the compiled engine: which jobs get one, that a profiled model gives
exactly the results of Amaranth's simulator, and that later jobs on the design reuse it."""

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import ndimage

from hwgen.kernels import WindowFilter
from hwgen.sim import compiled, instrument_pe, run_pe
from hwgen.sim.compiled import CompiledModel, Source

WIDTH, HEIGHT = 8, 6


def _pe():
    return instrument_pe(WindowFilter("max", (3, 3), width=WIDTH, height=HEIGHT, buffer="line"))


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(CompiledModel, "_loaded", {})
    return tmp_path


def test_only_a_job_long_enough_to_pay_for_the_profile_gets_one(cache):
    pe = _pe()
    unknown, short, long = (Source(pe, cycles=cycles) for cycles in (None, 1000, 10**12))
    assert not unknown.profiled and not short.profiled and long.profiled
    assert "-fprofile-use" not in short.flags and "-O3" in short.flags
    assert "-fprofile-use" in long.flags and "-O3" in long.flags
    assert long.path != short.path
    # The compile, the compile with counters and the training run are all in the estimate.
    assert long.compile_estimate() > 3 * short.compile_estimate()
    # The threshold: the loop time saved against the profile's cost, from the cells and RTLIL
    # size (a closed form of the documented constants).
    seconds_per_cycle = short.cells * compiled._SECONDS_PER_CELL_CYCLE * compiled._PROFILE_SAVES
    compile_o3 = compiled._COMPILE_FIXED_SECONDS + len(short.text) / 8_000
    training = (min(10**12, compiled._TRAINING_CYCLES) * short.cells
                * compiled._SECONDS_PER_CELL_CYCLE * compiled._TRAINING_SLOWDOWN)
    threshold = (compiled._PROFILE_COMPILES * compile_o3 + training) / seconds_per_cycle
    assert not Source(pe, cycles=int(threshold * 0.99)).profiled
    assert Source(pe, cycles=int(threshold * 1.01) + 1).profiled


def test_a_profiled_source_with_no_job_to_train_on_builds_at_o3(cache, monkeypatch):
    built = []
    monkeypatch.setattr(compiled, "_compile", lambda source, train=None: built.append(source))
    monkeypatch.setattr(compiled.CompiledModel, "__init__", lambda self, path: None)
    source = Source(_pe(), cycles=10**12)
    assert source.profiled
    _, info = CompiledModel.build(None, source=source)
    assert not built[0].profiled and "-fprofile-use" not in info.flags
    assert built[0].path == Source(_pe(), cycles=1000).path


def test_a_profile_guided_model_runs_as_pysim_and_later_jobs_reuse_it(cache, monkeypatch):
    # Profiled on demand and trained on the first 40 of the job's ~60 cycles (the prediction a
    # float, as the cycle model gives it), draining the HMM's traces meanwhile.
    monkeypatch.setenv("HWGEN_PGO", "on")
    image = np.random.default_rng(7).integers(0, 256, (HEIGHT, WIDTH))
    out = (HEIGHT - 2) * (WIDTH - 2)
    initial = [int(v) for v in image.ravel()] + [0] * out
    seen = []
    setup = compiled._setup

    def spy(model, designs, array, memory, **kwargs):
        seen.append(array.copy())
        return setup(model, designs, array, memory, **kwargs)

    monkeypatch.setattr(compiled, "_setup", spy)
    runs = {}
    for engine in ("pysim", "compiled"):
        storage = list(initial)
        run = run_pe(_pe(), storage, params={"src_base": 0, "dst_base": image.size},
                     drain_interval_cycles=8, engine=engine, expected_cycles=40.0)
        runs[engine] = storage, run
    (storage_a, a), (storage_b, b) = runs["pysim"], runs["compiled"]
    assert "-fprofile-use" in b.engine["flags"] and not b.engine["cached"]
    assert storage_b == storage_a and b.cycles == a.cycles > 40
    assert b.readout == a.readout and b.traffic == a.traffic
    expected = ndimage.grey_dilation(image, footprint=np.ones((3, 3)))[1:-1, 1:-1]
    assert storage_b[image.size:] == [int(v) for v in expected.ravel()]
    # The training run and the job each started from the caller's memory: training ran on a copy.
    assert len(seen) == 2 and all((array == initial).all() for array in seen)
    # A later job, even a short one under auto, finds the profiled model without building.
    monkeypatch.setenv("HWGEN_PGO", "auto")
    CompiledModel._loaded.clear()
    storage = list(initial)
    again = run_pe(_pe(), storage, params={"src_base": 0, "dst_base": image.size},
                   engine="compiled", expected_cycles=100.0)
    assert again.engine["cached"] and "-fprofile-use" in again.engine["flags"]
    assert storage == storage_a and again.cycles == a.cycles


def test_hwgen_pgo_turns_profiles_on_for_every_job_or_off(cache, monkeypatch):
    pe = _pe()
    monkeypatch.setenv("HWGEN_PGO", "on")
    assert Source(pe, cycles=100).profiled and Source(pe).profiled
    # Training runs the job's first cycles, at most the predicted ones (a float or not).
    assert Source(pe, cycles=40.0).training_cycles == 40
    assert Source(pe).training_cycles == compiled._TRAINING_CYCLES
    monkeypatch.setenv("HWGEN_PGO", "off")
    assert not Source(pe, cycles=10**12).profiled
    monkeypatch.setenv("HWGEN_PGO", "")
    assert Source(pe, cycles=10**12).profiled


def test_a_bad_hwgen_pgo_is_a_one_line_error(cache, monkeypatch):
    monkeypatch.setenv("HWGEN_PGO", "always")
    with pytest.raises(ValueError, match=r"^HWGEN_PGO must be one of auto, on, off, not 'always'$"):
        Source(_pe(), cycles=100)
    result = subprocess.run([sys.executable, "-m", "hwgen", "sim", "dilation", "--width", "8",
                             "--height", "6", "--engine", "auto", "-q"], capture_output=True,
                            text=True, env=dict(os.environ, HWGEN_PGO="always"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("hwgen: error: HWGEN_PGO must be one of auto, on, off, not "
                             "'always'\n")


@pytest.mark.slow
def test_a_failed_training_run_raises_and_leaves_no_profile_behind(tmp_path):
    # In a process of its own, to see what it writes when it exits.
    script = (
        "from hwgen.kernels import WindowFilter\n"
        "from hwgen.sim import instrument_pe\n"
        "from hwgen.sim.compiled import CompiledModel, Source\n"
        f"pe = instrument_pe(WindowFilter('max', (3, 3), width={WIDTH}, height={HEIGHT},"
        " buffer='line'))\n"
        "source = Source(pe)\n"
        "assert source.profiled\n"
        "def train(model, cycles):\n"
        "    raise RuntimeError('the training job failed')\n"
        "try:\n"
        "    CompiledModel.build(None, source=source, train=train)\n"
        "except RuntimeError as error:\n"
        "    print(error)\n"
        "assert not source.path.exists()\n")
    # The build's temporary folder under tmp_path too, where a profile written at exit would go.
    (tmp_path / "tmp").mkdir()
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, HWGEN_CACHE_DIR=str(tmp_path), HWGEN_PGO="on",
                                     TMPDIR=str(tmp_path / "tmp")))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the training job failed\n"
    assert "profiling" not in result.stderr
    assert not list(tmp_path.rglob("*.gcda"))
