"""`python -m hwgen` as a process: started bare, in a folder of the user's own files, with its
output piped to a reader that goes away, interrupted, logged to a file."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hwgen import progress
from hwgen.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def _start(*args, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "hwgen", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_no_arguments_print_the_usage_and_every_command(tmp_path):
    # As pip does: the help on standard output, and success.
    done = _start(cwd=tmp_path)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0 and err == ""
    assert out.startswith("usage: hwgen")
    for command in ("list", "build", "sim", "run", "synth", "estimate", "overhead", "roofline",
                    "explore"):
        assert f"\n    {command} " in out


def test_the_users_own_sim_and_kernels_do_not_shadow_hwgen(tmp_path):
    (tmp_path / "sim.py").write_text("x = 1\n")
    for name in ("kernels", "instrument", "boards"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user\\'s own')\n")
    done = _start("list", cwd=tmp_path)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    assert "dilation" in out and "gemm" in out and err == ""


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path):
    listing = _start("list", cwd=tmp_path)
    listing.stdout.close()   # as `| head -1` does once it has read its line
    err = listing.stderr.read()
    listing.wait(timeout=120)
    assert err == ""
    assert listing.returncode == 128 + signal.SIGPIPE


def test_ctrl_c_during_sim_says_interrupted_and_nothing_else(tmp_path):
    sim = _start("sim", "dilation", "--width", "256", "--height", "256", "--vcd", "w/x.vcd",
                 "--json", "j/r.json", cwd=tmp_path)
    # Wait until the simulation runs (the waveform file exists under its temporary name).
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("w/.x.vcd.*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    sim.send_signal(signal.SIGINT)
    out, err = sim.communicate(timeout=120)
    assert sim.returncode == 130
    assert out == "" and err == "hwgen: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_a_log_gets_no_progress_bar(tmp_path):
    done = _start("sim", "dilation", "--width", "32", "--height", "8", cwd=tmp_path)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0
    assert err == "" and "\r" not in out


def test_a_slow_step_says_how_far_it_is_in_a_log(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    with progress.Progress("simulating", total=100, unit="cycle") as bar:
        bar.update_to(40)
        time.sleep(0.3)
    with progress.Progress("synthesis (synth_ecp5 for ulx3s-85f)"):
        time.sleep(0.3)
    lines = capsys.readouterr().err.splitlines()
    assert "simulating: 40 of 100 cycles after 0 s" in lines
    assert "synthesis (synth_ecp5 for ulx3s-85f): still running after 0 s" in lines
    assert not any("\r" in line or "%|" in line for line in lines)


def test_a_quiet_step_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.05)
    with progress.Progress("simulating", total=10, unit="cycle", enabled=False) as bar:
        bar.update(3)
        time.sleep(0.2)
    assert capsys.readouterr() == ("", "")


@pytest.mark.slow
def test_a_sweep_says_how_much_its_cache_answered(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["explore", "dilation", "--image", "16x8", "--unroll", "1,2", "--buffer", "line",
            "-j", "1", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    assert "answered from the cache" not in capsys.readouterr().err
    assert main(argv) == 0
    # Every simulation and resource figure of the second sweep comes from the first's.
    assert re.search(r"^measuring: (\d+) of \1 measurements answered from the cache \(",
                     capsys.readouterr().err, re.MULTILINE)
