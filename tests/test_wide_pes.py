"""PEs hundreds of lanes wide simulate, and their HMM counts every lane."""

import numpy as np
import pytest

import reference as ref
from hwgen.kernels import WindowFilter
from hwgen.sim import run_window_filter


@pytest.mark.parametrize("buffer, unroll, height", [("line", 512, 4), ("smart", 300, 302)])
def test_a_pe_of_hundreds_of_lanes_filters_and_counts_every_lane(buffer, unroll, height):
    pe = WindowFilter("max", (3, 3), width=512, height=height, unroll=unroll, buffer=buffer)
    image = np.random.default_rng(3).integers(0, 256, size=(height, 512))
    run = run_window_filter(pe, image)
    outputs = (height - 2) * 510
    reads = 512 * height if buffer == "line" else 512 * (3 + unroll - 1)
    assert np.array_equal(run.image, ref.window_filter(image, ref.rect(3, 3), "max"))
    assert run.figures.measured_by == "hmm"
    assert (run.figures.bytes_read, run.figures.bytes_written, run.figures.ops) \
        == (reads, outputs, 8 * outputs)
