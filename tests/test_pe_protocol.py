"""The PE protocol: PESignature, ProcessingElement, check_pe; the built-in window filter and a
user's image PE (the Sobel example) through the harness, the cycle model and the commands."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from amaranth.hdl import Module, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from scipy import ndimage

from hwgen.catalog import KERNELS
from hwgen.cli.main import main
from hwgen.discovery import load_spec
from hwgen.kernels import WindowFilter
from hwgen.kernels.pe import BeatFormat, PESignature, ProcessingElement, check_pe
from hwgen.model import predict_window
from hwgen.sim import MemoryModel, run_window_filter

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sobel.py"
SPEC = f"{EXAMPLE}:SobelMagnitude"


def sobel():
    return load_spec(SPEC, "KERNEL")


def scipy_sobel_magnitude(image, limit):
    """|gx| + |gy| of scipy's Sobel filters, on the valid region, clipped."""
    image = np.asarray(image, dtype=np.int64)
    magnitude = np.abs(ndimage.sobel(image, axis=1)) + np.abs(ndimage.sobel(image, axis=0))
    return np.minimum(magnitude, limit)[1:-1, 1:-1]


def test_pe_signature_has_the_four_members():
    beat = BeatFormat(lanes=2, stride=1, element_bits=8)
    signature = PESignature(addr_width=10, rd_beat=beat, wr_beat=beat,
                            params={"src_base": unsigned(10)})
    assert set(signature.members) == {"ctrl", "rd_req", "rd_rsp", "wr_req"}
    assert signature.params == {"src_base": unsigned(10)}
    assert signature == PESignature(addr_width=10, rd_beat=beat, wr_beat=beat,
                                    params={"src_base": unsigned(10)})
    assert signature != PESignature(addr_width=11, rd_beat=beat, wr_beat=beat,
                                    params={"src_base": unsigned(10)})
    with pytest.raises(TypeError, match="rd_beat must be a BeatFormat"):
        PESignature(addr_width=10, rd_beat=(2, 1, 8), wr_beat=beat)


def test_processing_element_validates_what_it_says_of_itself():
    beat = BeatFormat(lanes=1, stride=1, element_bits=8)
    with pytest.raises(ValueError, match="max_outstanding_reads must be an integer >= 1"):
        ProcessingElement(addr_width=4, rd_beat=beat, wr_beat=beat, max_outstanding_reads=0)
    pe = ProcessingElement(addr_width=4, rd_beat=beat, wr_beat=beat, ops_per_element=3)
    assert (pe.ops_per_element, pe.max_outstanding_reads, pe.addr_width) == (3, 1, 4)
    assert pe.traffic() is None
    with pytest.raises(NotImplementedError):
        pe.reference(np.zeros((2, 2)))


def test_check_pe_names_what_is_missing():
    class Blinky(wiring.Component):
        def __init__(self):
            super().__init__({"led": Out(1), "ctrl": In(1)})

        def elaborate(self, platform):
            return Module()

    with pytest.raises(TypeError, match="lacks rd_req, rd_rsp, wr_req"):
        check_pe(Blinky())
    with pytest.raises(TypeError, match="must be an amaranth.lib.wiring.Component"):
        check_pe(object())
    beat = BeatFormat(lanes=1, stride=1, element_bits=8)
    bare = ProcessingElement(addr_width=4, rd_beat=beat, wr_beat=beat)
    with pytest.raises(TypeError, match="not an image PE: it lacks width, height"):
        check_pe(bare, image=True)
    check_pe(WindowFilter("max", (3, 3), width=8, height=6), image=True)


def test_window_filter_reference_is_scipy_dilation():
    pe = WindowFilter("max", (3, 5), mask="cross", width=12, height=7)
    image = np.random.default_rng(2).integers(0, 256, (7, 12))
    footprint = np.zeros((3, 5), dtype=bool)
    footprint[1, :] = footprint[:, 2] = True
    expected = ndimage.grey_dilation(image, footprint=footprint, mode="nearest")[1:-1, 2:-2]
    assert (pe.reference(image) == expected).all()


@pytest.mark.parametrize("width, height, latency", [(9, 5, 1), (6, 6, 4)])
def test_sobel_pe_matches_scipy_and_its_cycle_model(width, height, latency):
    pe = sobel()(width=width, height=height)
    image = np.random.default_rng(width).integers(0, 256, (height, width))
    memory = MemoryModel(latency_cycles=latency)
    run = run_window_filter(pe, image, memory=memory, engine="pysim")
    assert (run.image == scipy_sobel_magnitude(image, 255)).all()
    outputs = (width - 2) * (height - 2)
    # Read by the HMM: three 3-pixel beats per output, one pixel written per output.
    assert run.figures.bytes_read == 9 * outputs and run.figures.bytes_written == outputs
    prediction = predict_window(pe, memory)
    assert prediction.cycles == run.figures.cycles
    assert prediction.exact


def test_sobel_through_sim_and_estimate_commands(tmp_path, capsys):
    path = tmp_path / "sim.json"
    assert main(["sim", SPEC, "--width", "8", "--height", "5", "--engine", "pysim", "--json",
                 str(path), "-q"]) == 0
    report = json.loads(path.read_text())
    assert report["result_matches_numpy_model"] and report["fetch_model_matches"]
    assert report["ops"] == 11 * 6 * 3
    assert main(["report", str(path), "--out", str(tmp_path / "sim.html"), "-q"]) == 0
    assert "sobel width 8, height 5, pixel_bits 8" in (tmp_path / "sim.html").read_text()
    assert main(["estimate", SPEC, "--width", "8", "--height", "5", "--no-instrument"]) == 0
    out = capsys.readouterr().out
    # 18 outputs, each three requests, a 1-cycle memory, a write and a restart: 5 cycles.
    assert "sobel_width8_height5_pixel_bits8 (bare)" in out and "cycles 90 per job" in out


def test_sobel_on_the_roofline(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "roofline"
    assert main(["roofline", SPEC, "--image", "8x5", "--pixel-bits", "6,8", "--engine", "pysim",
                 "--out", str(out), "-q"]) == 0
    points = json.loads((out / "roofline.json").read_text())["points"]
    assert len(points) == 2
    for point in points:
        frame = point["frame"]
        # 18 outputs of 11 ops, 9 pixel reads and 1 write each; 5 cycles per output.
        assert (frame["ops"], frame["cycles"]) == (11 * 18, 5 * 18)
        assert frame["bytes_read"] == 9 * 18 and frame["bytes_written"] == 18


@pytest.mark.parametrize("argv, message", [
    (["sim", SPEC, "--buffer", "line"], "--buffer applies to the window filters, not to sobel"),
    (["sim", SPEC, "--width", "2"], "--width must be between 3 and 4096, not 2"),
    (["sim", SPEC, "--unroll", "2"], "--unroll applies to the window filters, not to sobel"),
    (["sim", f"{EXAMPLE}:main"], "is not a kernel"),
])
def test_user_kernel_refusals_in_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: ") and message in err and err.count("\n") == 1


def test_user_kernel_is_a_kernel_by_place():
    assert SPEC in KERNELS and "dilation" in KERNELS
    assert KERNELS[SPEC] is sobel()


@pytest.mark.slow
def test_sobel_example_runs_from_any_folder(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "output matches scipy: True" in done.stdout
