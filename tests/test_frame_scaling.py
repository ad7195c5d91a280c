"""A full frame's figures scaled from two short frames match a simulation of the full frame."""

import numpy as np
import pytest

from hwgen.roofline.frame_scaling import scale_frames, short_heights
from hwgen.roofline.sweep import DesignPoint, measure
from hwgen.kernels import WindowFilter
from hwgen.sim import run_window_filter


def simulate(buffer, unroll, pipeline, width, height):
    pe = WindowFilter("max", (3, 3), width=width, height=height, unroll=unroll, buffer=buffer,
                      pipeline=pipeline)
    image = np.random.default_rng(1).integers(0, 256, size=(height, width))
    return run_window_filter(pe, image).figures


@pytest.mark.parametrize("buffer, unroll, height, heights", [
    # 27 output rows: 6 strips of 4 and a last strip of 3; the short frames keep that last strip.
    ("smart", 4, 29, (2 + 3 + 4, 2 + 3 + 8)),
    ("smart", 3, 29, (2 + 0 + 3, 2 + 0 + 6)),
    ("line", 8, 29, (3, 4)),
    ("none", 2, 29, (3, 4)),
])
def test_short_frames_repeat_the_full_frames_last_strip(buffer, unroll, height, heights):
    assert short_heights(3, height, buffer, unroll) == heights


@pytest.mark.parametrize("buffer, unroll, height, heights", [
    ("smart", 4, 2 + 8, None),          # two strips: no taller than the second short frame
    ("smart", 4, 2 + 12, (6, 10)),      # three strips
    ("line", 1, 4, None),
    ("line", 1, 5, (3, 4)),
])
def test_frames_of_at_most_two_units_are_simulated_whole(buffer, unroll, height, heights):
    assert short_heights(3, height, buffer, unroll) == heights


@pytest.mark.parametrize("buffer, unroll, pipeline", [
    ("smart", 4, True), ("smart", 3, False), ("line", 4, True), ("line", 2, False),
    ("none", 3, True),
])
def test_scaled_figures_equal_a_full_simulation(buffer, unroll, pipeline):
    width, height = 24, 29
    short = [simulate(buffer, unroll, pipeline, width, h)
             for h in short_heights(3, height, buffer, unroll)]
    scaled = scale_frames(3, width, height, buffer, unroll, short)
    full = simulate(buffer, unroll, pipeline, width, height)
    assert scaled.scaled
    assert (scaled.cycles, scaled.ops, scaled.bytes_read, scaled.bytes_written, scaled.outputs) \
        == (full.cycles, full.ops, full.bytes_read, full.bytes_written, full.outputs)
    # The fetch counts of the full frame, written out.
    outputs = (height - 2) * (width - 2)
    reads = {"smart": sum(width * (3 + u - 1) for u in [unroll] * (27 // unroll)
                          + ([27 % unroll] if 27 % unroll else [])),
             "line": width * height, "none": 9 * outputs}[buffer]
    assert (scaled.bytes_read, scaled.bytes_written, scaled.ops) == (reads, outputs, 8 * outputs)


@pytest.mark.slow
@pytest.mark.parametrize("buffer", ["smart", "line"])
def test_scaled_512_frame_equals_its_full_simulation_exactly(buffer, tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    point = DesignPoint("dilation", 3, 3, "rect", 512, 512, 4, buffer, True)
    (measured,) = measure([point], "ulx3s-85f")
    assert measured.frame.scaled and max(measured.frame.simulated_heights) < 40
    full = simulate(buffer, 4, True, 512, 512)
    frame = measured.frame
    assert (frame.cycles, frame.outputs, frame.ops, frame.bytes_read, frame.bytes_written) \
        == (full.cycles, full.outputs, full.ops, full.bytes_read, full.bytes_written)
    assert (frame.ops_per_cycle, frame.ci) == (full.ops_per_cycle, full.ci)


@pytest.mark.parametrize("buffer, unroll", [("smart", 4), ("line", 8), ("none", 2)])
def test_scaled_frames_equal_the_compiled_engines_full_frame(buffer, unroll, tmp_path,
                                                             monkeypatch):
    # The compiled engine simulates the whole 512 x 512 frame; Amaranth's simulator two short
    # frames that are scaled to it. Both give the same figures, exactly.
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path))
    point = DesignPoint("dilation", 3, 3, "rect", 512, 512, unroll, buffer, True)
    (scaled,) = measure([point], "ulx3s-85f", engine="pysim")
    (full,) = measure([point], "ulx3s-85f", engine="compiled")
    assert scaled.frame.scaled and not full.frame.scaled
    assert full.frame.simulated_heights == (512,)
    for figure in ("cycles", "outputs", "ops", "bytes_read", "bytes_written"):
        assert getattr(scaled.frame, figure) == getattr(full.frame, figure), figure
