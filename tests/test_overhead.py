"""Building for a board, and the instrumentation overhead from real synthesis."""

import json

import pytest

from hwgen.boards import get_board
from hwgen.cli.main import main
from hwgen.catalog import board_tree_policy

SMALL = ["--width", "32", "--height", "8"]


@pytest.mark.parametrize("board, policy", [
    ("ulx3s-85f", "fast"), ("icebreaker", "fast"), ("arty-a7-100t", "lean"), ("ex500", "lean"),
])
def test_register_policy_follows_the_lut_size(board, policy):
    assert board_tree_policy(get_board(board)) == policy
    assert (get_board(board).resources.lut_inputs == 4) == (policy == "fast")


def test_build_for_an_ecp5_board_uses_its_block_ram_output_register(tmp_path):
    out = tmp_path / "ecp5"
    assert main(["build", "dilation", "--buffer", "line", "--unroll", "4", *SMALL,
                 "--board", "ulx3s-85f", "--out", str(out), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    verilog = (out / f"{manifest['top']}.v").read_text()
    assert manifest["board"] == "ulx3s-85f"
    assert manifest["parameters"]["tree_policy"] == "fast"
    assert manifest["top"].endswith("_fast_ulx3s_85f")
    assert verilog.count("DP16KD #(") >= 1 and "OUTREG" in verilog


def test_build_without_a_board_is_generic(tmp_path):
    out = tmp_path / "generic"
    assert main(["build", "dilation", "--buffer", "line", "--unroll", "4", *SMALL,
                 "--out", str(out), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["board"] is None and manifest["parameters"]["tree_policy"] == "lean"
    assert "DP16KD" not in (out / f"{manifest['top']}.v").read_text()


@pytest.mark.slow
def test_overhead_compares_the_pe_with_and_without_its_hmm(tmp_path, capsys):
    report = tmp_path / "overhead.json"
    assert main(["overhead", "dilation", "--buffer", "line", "--unroll", "2", *SMALL,
                 "--board", "ulx3s-85f", "--seeds", "1", "--json", str(report), "-q"]) == 0
    out = capsys.readouterr().out
    data = json.loads(report.read_text())
    figures = data["figures"]
    for name in ("lut", "ff", "block_ram_blocks", "block_ram_bits", "memory_bits", "fmax_mhz"):
        row = figures[name]
        assert row["overhead"] == row["with_hmm"] - row["bare"]
    assert figures["lut"]["with_hmm"] > figures["lut"]["bare"]
    assert figures["ff"]["with_hmm"] > figures["ff"]["bare"]
    # The HMM's tables (a state profile and latency bins) add storage.
    assert figures["memory_bits"]["overhead"] > 0
    lut = figures["lut"]
    assert lut["overhead_percent"] == pytest.approx(100 * lut["overhead"] / lut["bare"])
    assert data["device_share_percent"]["lut"] == pytest.approx(100 * lut["overhead"] / 83640)
    assert "Fmax (MHz)" in out and "% of the device's LUTs" in out
    assert "bare and with HMM" in out and data["bare"]["name"] == "bare"


@pytest.mark.slow
def test_overhead_of_a_program_s_minimal_profile(tmp_path):
    report = tmp_path / "overhead.json"
    assert main(["overhead", "gemm", "--variant", "naive", "--dim", "4", "--threads", "2",
                 "--probes", "minimal", "--board", "ulx3s-85f", "--seeds", "1",
                 "--json", str(report), "-q"]) == 0
    data = json.loads(report.read_text())
    assert data["program"] == "gemm" and data["probes"] == "minimal"
    assert data["parameters"]["threads"] == 2 and data["parameters"]["variant"] == "naive"
    figures = data["figures"]
    assert figures["ff"]["overhead"] > 0
    # The records of the thread states and of the job: 1024 x (32 + 1 + 2 x 2) and 2 x (32 + 2).
    assert figures["memory_bits"]["overhead"] == 1024 * 37 + 2 * 34


def test_a_program_is_not_a_system_of_pes(capsys):
    assert main(["overhead", "gemm", "--pes", "2", "-q"]) == 2
    assert "--pes builds systems of window-filter PEs" in capsys.readouterr().err
