"""``python -m hwgen run``: runs a program and reports its figures."""

import json

import numpy as np
import pytest

from hwgen.cli.main import main
from hwgen.sim import STATE_NAMES


def test_run_gemm_prints_and_writes_the_figures(tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["run", "gemm", "--variant", "nocritical", "--threads", "3", "--dim", "4",
                 "--mem-latency", "2", "--json", str(out), "--seed", "4"]) == 0
    text = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["result_matches_numpy_model"] is True
    assert report["parameters"] == {"variant": "nocritical", "dim": 4, "threads": 3,
                                    "element_bits": 32, "frac_bits": 0}
    assert report["memory"]["latency_cycles"] == 2
    assert report["tool_versions"]["amaranth"]
    assert f"{report['cycles']} cycles" in text and "matches the numpy model" in text
    threads = report["threads"]
    assert [t["thread"] for t in threads] == [0, 1, 2]
    for thread in threads:
        percent = [thread[f"{name}_percent"] for name in STATE_NAMES]
        assert sum(percent) == pytest.approx(100.0)
        assert thread["critical_percent"] == thread["spinning_percent"] == 0
    # 2 loads of 4 bytes per multiply-accumulate, one 4-byte store per output.
    assert report["bytes_read"] == 2 * 4 * 4 ** 3 and report["bytes_written"] == 4 * 4 ** 2
    assert report["bytes_per_cycle"] == pytest.approx(
        (report["bytes_read"] + report["bytes_written"]) / report["cycles"])
    assert report["ops"] == 2 * 4 ** 3


def test_run_pi_reports_the_value(tmp_path, capsys):
    out = tmp_path / "pi.json"
    assert main(["run", "pi", "--steps", "12", "--threads", "4", "--launch-delay", "5",
                 "--json", str(out), "-q"]) == 0
    assert capsys.readouterr().out == ""
    report = json.loads(out.read_text())
    assert report["result_matches_numpy_model"] is True
    assert abs(report["pi"] - np.pi) < 0.01
    assert [t["launch_cycle"] for t in report["threads"]] == [0, 5, 10, 15]
    assert report["host"] == {"launch_delay_cycles": 5, "drain_interval_cycles": 64}


@pytest.mark.parametrize("argv, message", [
    (["run", "fft"], "PROGRAM must be one of gemm, pi, not 'fft'"),
    (["run", "gemm", "--variant", "tiled"], "--variant must be one of naive, nocritical"),
    (["run", "gemm", "--steps", "4"], "--steps applies to pi"),
    (["run", "pi", "--dim", "4"], "--dim applies to gemm"),
    (["run", "gemm", "--dim", "4", "--steps", "3"], "--steps applies to pi, not gemm"),
    (["run", "gemm", "--variant", "vector", "--dim", "6"],
     "--lanes must divide dim 6, not 4 (4 is the default of --lanes: give --lanes)"),
    (["run", "gemm", "--variant", "vector", "--dim", "6", "--lanes", "4"],
     "--lanes must divide dim 6, not 4"),
    (["run", "gemm", "--threads", "0"], "--threads must be between 1 and 64, not 0"),
    (["run", "pi", "--steps", "0"], "--steps must be between 1 and 4294967295, not 0"),
    (["run", "pi", "--launch-delay", "-1"], "--launch-delay must be an integer >= 0"),
    (["run", "pi", "--mem-latency", "0"], "--mem-latency must be an integer >= 1"),
    (["run", "pi", "--json", "/dev/null/x.json"], "--json: '/dev/null' is not a folder"),
    (["run", "pi", "--frac-bits", "40"], "--frac-bits must be between 4 and 28, not 40"),
    (["run", "pi", "--steps", "4000000"],
     "the step 2**20/4000000 rounds to 0, more than 1% off; raise --frac-bits"),
    (["run", "gemm", "--element-bits", "1"], "--element-bits must be between 2 and 64, not 1"),
    (["run", "gemm", "--frac-bits", "32"], "--frac-bits must be between 0 and 31, not 32"),
    (["run", "gemm", "--variant", "blocked", "--threads", "1"],
     "--threads must be between 2 and 64, not 1"),
])
def test_run_rejects_bad_options_in_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: ") and message in err and err.count("\n") == 1
