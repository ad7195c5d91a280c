# amaranth: UnusedElaboratable=no
"""``hwgen profile``: its table, JSON, HTML page and window, and its refusals."""

import json

import pytest

from hwgen.cli.main import main
from hwgen.sim.compiled import EngineUnavailable, check_available


def compiled_available():
    try:
        check_available()
    except EngineUnavailable:
        return False
    return True


def test_profile_of_a_kernel_writes_json_html_and_a_window(tmp_path, capsys):
    out, page = tmp_path / "p.json", tmp_path / "p.html"
    assert main(["profile", "dilation", "--width", "10", "--height", "6", "--buffer", "line",
                 "--cycles", "5:8", "--json", str(out), "--report", str(page)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["cycles"] > 0 and data["steps"] == []
    assert set(data["lines"][0]) == {"file", "line", "code", "active_cycles", "percent"}
    counts = [line["active_cycles"] for line in data["lines"]]
    assert counts == sorted(counts, reverse=True)
    # The write line is active once per output beat: 8 x 4 outputs, one per beat at unroll 1.
    (write,) = [line for line in data["lines"] if "a result beat is written" in line["code"]]
    assert write["file"] == "kernels/window.py" and write["active_cycles"] == 8 * 4
    assert write["percent"] == pytest.approx(100 * 32 / data["cycles"])
    assert [entry["cycle"] for entry in data["window"]] == [5, 6, 7]
    assert "kernels/window.py" in printed and "cycle  lines active" in printed
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "a result beat is written" in html


def test_profile_of_a_program_has_its_steps(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert main(["profile", "gemm", "--dim", "3", "--threads", "2", "--json", str(out),
                 "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    steps = {step["name"]: step for step in json.loads(out.read_text())["steps"]}
    assert steps["mac"]["executions"] == 27 and steps["load c"]["executions"] == 9 * 2
    assert steps["mac"]["file"] == "kernels/programs/gemm.py"
    assert steps["entry"]["file"] is None
    acquire = steps["acquire"]
    for key in ("executions", "running_cycles", "stalled_cycles", "stalled_memory_cycles",
                "stalled_lock_cycles", "stalled_next_stage_cycles", "occupancy_threads",
                "bytes_moved", "ops", "stall_role"):
        assert key in acquire
    assert acquire["stalled_cycles"] == acquire["stalled_lock_cycles"] > 0


@pytest.mark.parametrize("target, argv, message", [
    ("nosuch", [], "KERNEL|PROGRAM must be one of dilation, erosion, gemm, pi"),
    ("dilation", ["--cycles", "9:3"], "--cycles must be A:B"),
    ("dilation", ["--cycles", "x"], "--cycles must be A:B"),
    ("dilation", ["--top", "-1"], "--top must be an integer >= 0"),
    ("gemm", ["--dim", "0"], "--dim"),
    ("gemm", ["--unroll", "4"], "--unroll is one of the kernel options; it does not apply to "
                                "program gemm"),
    ("dilation", ["--threads", "4"], "--threads is one of the program options; it does not "
                                     "apply to kernel dilation"),
])
def test_profile_refuses_bad_options_in_one_line(tmp_path, capsys, target, argv, message):
    out = tmp_path / "p.json"
    size = ["--width", "8", "--height", "6"] if target != "gemm" else []
    code = main(["profile", target, *size, "--json", str(out), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err
    assert not out.exists()


def test_hmm_line_counters_agree_with_the_simulation(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["profile", "erosion", "--width", "9", "--height", "6", "--unroll", "3",
                 "--buffer", "line", "--hmm", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    lines = len(data["lines"])
    assert data["hmm"] == {"line_counters": lines, "counter_bits": 32,
                           "total_counter_bits": 32 * lines, "equal_to_simulation": True,
                           "saturated": []}
    assert f"{lines} x 32 bits" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(not compiled_available(), reason="no C++ compiler or CXXRTL headers")
def test_compiled_engine_profiles_through_the_hmm(tmp_path):
    simulated, compiled = tmp_path / "s.json", tmp_path / "c.json"
    common = ["profile", "dilation", "--width", "16", "--height", "8", "--buffer", "smart",
              "--quiet"]
    assert main([*common, "--json", str(simulated)]) == 0
    assert main([*common, "--engine", "compiled", "--json", str(compiled)]) == 0
    a, b = json.loads(simulated.read_text()), json.loads(compiled.read_text())
    assert a["cycles"] == b["cycles"] and a["lines"] == b["lines"]
    assert b["engine"]["name"] == "compiled"


def test_compiled_engine_has_no_cycle_window(capsys):
    assert main(["profile", "dilation", "--engine", "compiled", "--cycles", "0:4"]) == 2
    assert "--cycles" in capsys.readouterr().err
