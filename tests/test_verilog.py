"""The emitted Verilog: Verilator lint, and Icarus Verilog against Amaranth's simulator."""

import re
from pathlib import Path
import shutil
import subprocess

import numpy as np
import pytest

import reference as ref
from hwgen.build import convert
from hwgen.kernels import WindowFilter
from hwgen.sim import run_window_filter
from verilog_tb import window_testbench

# Warning classes Verilator -Wall reports on Amaranth's output, each judged harmless:
# - CASEINCOMPLETE: Yosys writes each FSM decoder as a default assignment followed by a case
#   without a default arm; the default assignment covers the missing values, no latch.
# - DECLFILENAME: submodules are emitted into the top module's file, named top.sub.
# - UNUSEDSIGNAL: Yosys keeps intermediate nets and unused bits of wide results (the top bits
#   of an adder whose sum is truncated, fields a stage does not read).
# - WIDTH: constants narrower than the other operand, which Verilog zero-extends; the test
#   below checks every WIDTH warning is such an extension, never a truncation.
WAIVED = ("CASEINCOMPLETE", "DECLFILENAME", "UNUSEDSIGNAL", "WIDTH")

DESIGNS = [
    dict(buffer="none", unroll=2, size=(3, 3), mask="cross"),
    dict(buffer="smart", unroll=3, size=(3, 3), mask="rect"),
    dict(buffer="smart", unroll=1, size=(2, 3), mask="rect", pipeline=False),
    dict(buffer="line", unroll=4, size=(3, 5), mask="ellipse"),
    dict(buffer="line", unroll=1, size=(3, 3), mask="rect", pixel_bits=12),
]
IDS = ["none", "smart", "smart-nopipe", "line", "line-12bit"]


def _design(params, width=16, height=10):
    params = dict(params)
    size = params.pop("size")
    return WindowFilter("max", size, width=width, height=height, **params)


@pytest.mark.skipif(shutil.which("verilator") is None, reason="needs verilator")
@pytest.mark.parametrize("params", DESIGNS, ids=IDS)
def test_verilator_lint_reports_only_waived_classes(tmp_path, params):
    pe = _design(params)
    verilog_text, _ = convert(pe, "top")
    (tmp_path / "top.v").write_text(verilog_text)
    result = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-fatal", "top.v"],
                            cwd=tmp_path, capture_output=True, text=True)
    classes = set(re.findall(r"%Warning-([A-Z_]+)", result.stderr))
    assert classes <= set(WAIVED), result.stderr
    assert "%Error" not in result.stderr.replace("%Error: Exiting due to", "")
    for expects, generates in re.findall(r"expects (\d+) bits.*?generates (\d+) bits", result.stderr):
        assert int(generates) <= int(expects), "a WIDTH warning is a truncation"
    waived = subprocess.run(["verilator", "--lint-only", "-Wall", *[f"-Wno-{w}" for w in WAIVED],
                             "top.v"], cwd=tmp_path, capture_output=True, text=True)
    assert waived.returncode == 0, waived.stderr


def _icarus_run(tmp_path, pe, image, platform=None, models=()):
    """Simulate ``pe``'s Verilog with Icarus; returns (output image, busy cycles)."""
    height, width = image.shape
    verilog_text, _ = convert(pe, "top", platform=platform)
    (tmp_path / "top.v").write_text(verilog_text)
    digits = (pe.pixel_bits + 3) // 4
    (tmp_path / "image.hex").write_text("".join(f"{v:0{digits}x}\n" for v in image.ravel()))
    out_words = pe.out_width * pe.out_height
    (tmp_path / "tb.v").write_text(window_testbench(
        pe, "top", memory_words=width * height + out_words, image_hex="image.hex",
        dst_base=width * height, out_words=out_words, out_hex="out.hex"))
    # Verilog-2005 semantics: Yosys relies on a declaration initializer producing an event at
    # time 0 to evaluate its always @* blocks once (SystemVerilog does not produce one).
    subprocess.run(["iverilog", "-g2005", "-o", "sim.vvp", "tb.v", "top.v", *map(str, models)],
                   cwd=tmp_path, check=True, capture_output=True)
    result = subprocess.run(["vvp", "-n", "sim.vvp"], cwd=tmp_path, capture_output=True, text=True)
    assert "FAIL" not in result.stdout, result.stdout
    cycles = int(re.search(r"CYCLES (\d+)", result.stdout)[1])
    output = np.array([int(line, 16) for line in (tmp_path / "out.hex").read_text().split()])
    return output.reshape(pe.out_height, pe.out_width), cycles


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog")
@pytest.mark.parametrize("params", DESIGNS, ids=IDS)
def test_icarus_matches_amaranth_cycle_for_cycle(tmp_path, params):
    width, height = 16, 10
    pe = _design(params, width, height)
    rng = np.random.default_rng(4)
    image = rng.integers(0, 1 << pe.pixel_bits, (height, width))
    run = run_window_filter(pe, image)
    output, cycles = _icarus_run(tmp_path, pe, image)
    np.testing.assert_array_equal(output, ref.window_filter(image, pe.mask, "max"))
    np.testing.assert_array_equal(output, run.image)
    assert cycles == run.figures.cycles


class _ECP5:
    """What the window filters look at in an Amaranth platform to pick ECP5 primitives."""
    family = "ecp5"


class _ICE40:
    """An iCE40 platform as the window filters see it: a family without LUT RAM."""
    family = "ice40"


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog")
@pytest.mark.parametrize("width,height,unroll,size,bits", [
    (16, 9, 1, (3, 3), 8),      # 16 words of 16 bits: one 18-bit-wide tile
    (32, 7, 8, (3, 3), 8),      # 4 words of 128 bits: eight tiles, the shortest read-ahead
    (20, 6, 4, (5, 3), 12),     # 4 rows of 48-bit beats: 11 tiles
    (2048, 3, 1, (3, 3), 8),    # 2048 words: the 9-bit-wide mode
    (4096, 3, 2, (2, 2), 3),    # 2048 words of 6 bits: the 9-bit-wide mode, one tile
])
def test_ecp5_block_ram_line_buffer_matches_amaranth(tmp_path, width, height, unroll, size, bits):
    """On ECP5 the line buffer reads three beats ahead through DP16KD output registers; its
    Verilog, with a behavioural DP16KD, gives the generic design's image and cycle count."""
    pe = WindowFilter("max", size, width=width, height=height, unroll=unroll, buffer="line",
                      pixel_bits=bits)
    image = np.random.default_rng(width).integers(0, 1 << bits, (height, width))
    run = run_window_filter(pe, image)
    verilog_text, _ = convert(pe, "top", platform=_ECP5())
    assert "DP16KD" in verilog_text and "OUTREG" in verilog_text
    output, cycles = _icarus_run(tmp_path, pe, image, platform=_ECP5(),
                                 models=[Path(__file__).parent / "dp16kd.v"])
    np.testing.assert_array_equal(output, run.image)
    assert cycles == run.figures.cycles


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs iverilog")
@pytest.mark.parametrize("params", DESIGNS, ids=IDS)
def test_ice40_build_matches_amaranth(tmp_path, params):
    """On the iCE40 the result FIFO is block RAM read a cycle ahead (Yosys's memory, with its
    transparent read); its Verilog gives the generic design's image and cycle count."""
    width, height = 16, 10
    pe = _design(params, width, height)
    image = np.random.default_rng(9).integers(0, 1 << pe.pixel_bits, (height, width))
    run = run_window_filter(pe, image)
    output, cycles = _icarus_run(tmp_path, pe, image, platform=_ICE40())
    np.testing.assert_array_equal(output, ref.window_filter(image, pe.mask, "max"))
    np.testing.assert_array_equal(output, run.image)
    assert cycles == run.figures.cycles
