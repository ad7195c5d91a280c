"""How the engine is chosen and what its fixed costs show: ``auto``, bad settings, the compiler,
SIGTERM during a compile, the progress of a compile and the seconds a command reports."""

import gc
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from hwgen import progress
from hwgen.catalog import make_window_filter
from hwgen.cli.main import main
from hwgen.sim import compiled, engine as engines, run_window_filter
from hwgen.sim.compiled import (BuildInfo, CompiledEngine, CompiledModel, EngineUnavailable,
                                check_available)
from hwgen.sim.pysim_engine import PysimEngine
from hwgen.sim.engine import EngineNotice, choose_engine, resolve_engine


def test_the_default_is_auto_and_hwgen_engine_errors_name_it(monkeypatch):
    monkeypatch.delenv("HWGEN_ENGINE", raising=False)
    assert resolve_engine(None) == "auto"
    monkeypatch.setenv("HWGEN_ENGINE", "fast")
    with pytest.raises(ValueError, match="^HWGEN_ENGINE must be one of auto, pysim, compiled, "
                                         "not 'fast'$"):
        resolve_engine(None)
    with pytest.raises(ValueError, match="^--engine must be"):
        resolve_engine("fast", name="--engine")


def test_hwgen_engine_is_named_on_the_command_line(monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_ENGINE", "fast")
    assert main(["sim", "dilation", "--width", "8", "--height", "5", "-q"]) == 2
    err = capsys.readouterr().err
    assert "HWGEN_ENGINE must be one of" in err and "--engine" not in err


def test_a_bad_engine_is_refused_before_anything_is_built():
    pe = make_window_filter("dilation", width=8, height=5)
    gc.collect()   # what earlier tests left behind warns here, not below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="engine must be one of"):
            run_window_filter(pe, np.zeros((5, 8), int), engine="fast")
        gc.collect()
    # Nothing was built for the job (the HMM's modules would each warn when collected).
    assert not [w for w in caught if issubclass(w.category, UnusedElaboratable)]


def _fake_compiler(folder, body):
    path = Path(folder) / "fakecxx"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_compiler_that_is_not_one_is_named(monkeypatch):
    monkeypatch.setenv("CXX", "false")
    with pytest.raises(EngineUnavailable, match="^CXX=false is not a C\\+\\+ compiler"):
        check_available()
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    with pytest.raises(EngineUnavailable, match="^CXX=/nonexistent/g\\+\\+ names no program"):
        check_available()
    with pytest.raises(EngineUnavailable, match="^engine=compiled: CXX=/nonexistent/g\\+\\+"):
        resolve_engine("compiled")
    with pytest.warns(EngineNotice, match="CXX=/nonexistent/g\\+\\+"):
        assert resolve_engine("auto") == "pysim"


def test_cxx_false_is_one_line_on_the_command_line(tmp_path):
    env = dict(os.environ, CXX="false")
    result = subprocess.run([sys.executable, "-m", "hwgen", "sim", "dilation", "--width", "8",
                             "--height", "5", "--engine", "compiled"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr == ("hwgen: error: --engine=compiled: CXX=false is not a C++ compiler: "
                             "'/usr/bin/false --version' exited with status 1\n"
                             if Path("/usr/bin/false").exists() else result.stderr)
    assert result.stderr.count("\n") == 1 and "CXX=false" in result.stderr


class _Source:
    """A stand-in for :class:`hwgen.sim.compiled.Source` with a given size and cache state."""
    made = 0

    def __init__(self, design, *, waveforms=False, cycles=None):
        type(self).made += 1
        self.cells, self.cached, self.seconds = 1000, False, 30.0

    def compile_estimate(self):
        return self.seconds

    @classmethod
    def if_built(cls, design, *, waveforms=False, cycles=None):
        return None     # no model found without converting


def test_auto_runs_a_short_job_on_pysim_without_converting_the_design(monkeypatch):
    monkeypatch.setattr(compiled, "Source", _Source)
    _Source.made = 0
    pe = make_window_filter("dilation", width=8, height=5)
    assert isinstance(choose_engine("auto", [pe], cycles=engines.SHORT_CYCLES), PysimEngine)
    assert _Source.made == 0
    # Named engines are taken as they are (the compiled one makes its source when it runs).
    chosen = choose_engine("compiled", [pe], cycles=10)
    assert isinstance(chosen, CompiledEngine) and chosen.source is None
    assert isinstance(choose_engine("pysim", [pe], cycles=10**9), PysimEngine)
    assert _Source.made == 0


@pytest.mark.parametrize("cached, cycles, chosen", [
    (True, 5_000, "compiled"),       # a cached model loads at once
    (False, 5_000, "pysim"),         # 5,000 cycles of 1,000 cells: under 2 s in pysim, not 30
    (False, 1_000_000, "compiled"),  # 330 s in pysim: compiling for 30 s saves most of it
    (False, None, "compiled"),       # nothing predicted: the job may be long
])
def test_auto_weighs_the_compile_against_pysim(monkeypatch, cached, cycles, chosen):
    made = []

    class Source(_Source):
        def __init__(self, design, *, waveforms=False, cycles=None):
            super().__init__(design)
            self.cached = cached
            made.append(self)

    monkeypatch.setattr(compiled, "Source", Source)
    pe = make_window_filter("dilation", width=8, height=5)
    engine = choose_engine("auto", [pe], cycles=cycles)
    assert engine.name == chosen
    # The source made to decide goes on to the compiled engine, so it is made once.
    if chosen == "compiled":
        assert engine.source is made[0] and len(made) == 1


def test_a_large_design_compiles_at_o1_for_a_short_job(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled, "_LARGE_RTLIL_BYTES", 0)
    pe = make_window_filter("dilation", width=8, height=5)
    short = compiled.Source(pe, cycles=1000)
    assert "-O1" in short.flags and "-O3" not in short.flags
    # A long job, or one of unknown length, gets -O3's faster clock loop.
    assert "-O3" in compiled.Source(pe, cycles=10**9).flags
    assert "-O3" in compiled.Source(pe).flags
    # A model built at either level serves every job.
    long = compiled.Source(pe)
    long.path.parent.mkdir(parents=True, exist_ok=True)
    long.path.write_bytes(b"")
    again = compiled.Source(pe, cycles=1000)
    assert "-O3" in again.flags and again.cached and again.path == long.path
    monkeypatch.setattr(compiled, "_LARGE_RTLIL_BYTES", 10**9)
    assert "-O3" in compiled.Source(pe, cycles=1000).flags


def test_pysim_estimate_grows_with_cycles_and_cells():
    assert engines.pysim_seconds(2000, 1000) == 2 * engines.pysim_seconds(1000, 1000)
    assert engines.pysim_seconds(1000, 2000) == 2 * engines.pysim_seconds(1000, 1000)


def test_sigterm_during_a_compile_leaves_no_temporary_folder_and_no_compiler(tmp_path):
    # Like g++, the fake driver leaves the compiling to a program of its own.
    compiler = tmp_path / "compiler.pid"
    cxx = _fake_compiler(tmp_path, 'case "$1" in --version) echo "fake g++ 1.0";; '
                                   f'*) sleep 60 & echo $! > {compiler}; wait;; esac')
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = ("from hwgen.catalog import make_window_filter\n"
              "from hwgen.sim.compiled import CompiledModel\n"
              "CompiledModel.build(make_window_filter('dilation', width=8, height=5))\n")
    env = dict(os.environ, CXX=cxx, TMPDIR=str(temp), HWGEN_CACHE_DIR=str(tmp_path / "cache"))
    child = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    # Wait until the compiler runs on the model (Yosys has written it).
    while not list(temp.glob("hwgen-cxxrtl-*/model.cc")):
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    while not compiler.exists() or not compiler.read_text().strip():
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM
    assert list(temp.glob("hwgen-cxxrtl-*")) == []
    # The compiler the driver started is gone too (killing the driver alone leaves it running).
    pid = int(compiler.read_text())
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid):
    """The state letter of process ``pid`` (``Z``: ended, not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return "gone"


def test_a_compile_is_a_stage_apart_from_the_count_in_a_log(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    with progress.Progress("simulating", total=100, unit="cycle") as bar:
        with progress.stage("compiling the simulation model"):
            time.sleep(0.3)
        bar.update_to(40)
        time.sleep(0.3)
    lines = capsys.readouterr().err.splitlines()
    assert "compiling the simulation model: still running after 0 s" in lines
    assert "simulating: 40 of 100 cycles after 0 s" in lines
    # While compiling, no line counts cycles.
    first = lines.index("compiling the simulation model: still running after 0 s")
    assert not any(line.startswith("simulating: 0 of") for line in lines[:first])


def test_a_quiet_step_says_nothing_while_compiling(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    with progress.Progress("simulating", total=10, unit="cycle", enabled=False):
        with progress.stage("compiling the simulation model"):
            time.sleep(0.2)
    assert capsys.readouterr() == ("", "")


def test_a_count_past_its_total_raises_the_total(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    with progress.Progress("simulating", total=132, unit="cycle") as bar:
        bar.update_to(144)
        time.sleep(0.2)
    assert "simulating: 144 of 144 cycles after 0 s" in capsys.readouterr().err.splitlines()


def test_simulation_seconds_leave_the_compile_out(monkeypatch, tmp_path, capsys):
    """The JSON's ``simulation_seconds`` and the printed line count the simulation alone; the
    compile is reported apart, in ``engine``."""
    pause = 3.0
    real_build = CompiledModel.build.__func__
    reported = []

    def build(cls, design, **options):
        # Whatever the real build took (a compile, or the cache), and a pause, count as
        # compiling.
        started = time.perf_counter()
        model, info = real_build(cls, design, **options)
        time.sleep(pause)
        reported.append(time.perf_counter() - started)
        return model, BuildInfo(info.path, False, reported[-1], info.flags)

    monkeypatch.setattr(CompiledModel, "build", classmethod(build))
    report = tmp_path / "sim.json"
    assert main(["sim", "dilation", "--width", "8", "--height", "5", "--engine", "compiled",
                 "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["engine"]["compile_seconds"] == reported[0]
    # 28 cycles of a cached model: far under the pause.
    assert data["simulation_seconds"] < pause
    line = [line for line in capsys.readouterr().out.splitlines() if "simulated" in line][0]
    assert f"in {data['simulation_seconds']:.1f} s by the compiled engine" in line
    assert f"compiled in {reported[0]:.1f} s" in line


@pytest.mark.parametrize("quiet", [True, False])
def test_a_compile_in_a_command_is_its_own_stage_and_quiet_means_quiet(monkeypatch, capsys,
                                                                       quiet):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    real_build = CompiledModel.build.__func__

    def build(cls, design, **options):
        with progress.stage("compiling the simulation model"):
            time.sleep(0.3)
        return real_build(cls, design, **options)

    monkeypatch.setattr(CompiledModel, "build", classmethod(build))
    command = ["sim", "dilation", "--width", "8", "--height", "5", "--engine", "compiled"]
    assert main(command + ["-q"] * quiet) == 0
    out, err = capsys.readouterr()
    if quiet:
        assert (out, err) == ("", "")
    else:
        lines = err.splitlines()
        compiling = [i for i, line in enumerate(lines)
                     if line == "compiling the simulation model: still running after 0 s"]
        assert len(compiling) >= 2
        # While the model compiles, nothing counts simulated cycles.
        assert not any(line.startswith("simulating:")
                       for line in lines[compiling[0]:compiling[-1]])
