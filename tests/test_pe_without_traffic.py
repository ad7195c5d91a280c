"""A user's PE that states no closed-form traffic (``traffic()`` is ``None``) through ``sim``,
``report``, ``estimate`` and ``roofline``: the figures that need the fetch model are n/a, the
measured ones are still there."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from hwgen.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sobel.py"

PE_FILE = f'''
from hwgen.discovery import load_spec

SobelMagnitude = load_spec({str(EXAMPLE)!r} + ":SobelMagnitude", "KERNEL")


class UncountedSobel(SobelMagnitude):
    """The Sobel example, stating no closed-form traffic."""
    name = "uncounted-sobel"

    def traffic(self):
        return None
'''

# 8x5 frames: 6x3 outputs, each read as three 3-pixel beats and written once.
OUTPUTS = 6 * 3


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "uncounted.py"
    path.write_text(PE_FILE)
    return f"{path}:UncountedSobel"


def test_sim_shows_the_fetch_model_as_na_and_measures_the_traffic(spec, tmp_path, capsys):
    image = np.random.default_rng(5).integers(0, 256, size=(5, 8))
    np.save(tmp_path / "in.npy", image)
    report = tmp_path / "sim.json"
    assert main(["sim", spec, "--input", str(tmp_path / "in.npy"), "--engine", "pysim",
                 "--output", str(tmp_path / "out.npy"), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "fetch model n/a" in out
    data = json.loads(report.read_text())
    assert data["fetch_model"] is None and data["fetch_model_matches"] is None
    assert data["suspect"] == []
    assert (data["bytes_read"], data["bytes_written"], data["ops"]) == (9 * OUTPUTS, OUTPUTS,
                                                                          11 * OUTPUTS)
    frame = image.astype(np.int64)
    scipy_magnitude = np.minimum(np.abs(ndimage.sobel(frame, axis=1))
                                 + np.abs(ndimage.sobel(frame, axis=0)), 255)[1:-1, 1:-1]
    assert (np.load(tmp_path / "out.npy") == scipy_magnitude).all()
    assert main(["report", str(report), "--out", str(tmp_path / "sim.html"), "-q"]) == 0
    assert "uncounted-sobel" in (tmp_path / "sim.html").read_text()


def test_estimate_gives_resources_and_cycles_na(spec, tmp_path, capsys):
    report = tmp_path / "estimate.json"
    assert main(["estimate", spec, "--width", "8", "--height", "5", "--no-instrument",
                 "--json", str(report)]) == 0
    assert "cycles n/a (the PE states no closed-form traffic" in capsys.readouterr().out
    data = json.loads(report.read_text())
    assert data["cycles"] is None and data["prediction"] is None
    assert data["lut"] > 0 and data["ff"] > 0


def test_roofline_measures_the_point_by_simulation(spec, tmp_path):
    out = tmp_path / "roofline"
    assert main(["roofline", spec, "--image", "8x5", "--engine", "pysim", "-j", "1",
                 "--out", str(out), "-q"]) == 0
    (point,) = json.loads((out / "roofline.json").read_text())["points"]
    frame = point["frame"]
    assert (frame["ops"], frame["bytes_read"], frame["bytes_written"]) == (
        11 * OUTPUTS, 9 * OUTPUTS, OUTPUTS)
    # Three requests, a 1-cycle memory, a write and a restart per output (the PE's own count,
    # not used by the roofline, which measured it).
    assert frame["cycles"] == 5 * OUTPUTS
