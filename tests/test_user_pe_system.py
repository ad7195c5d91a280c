"""``--pes`` for an image PE of the user's: a system of its copies behind one memory port,
simulated and built from the command line, each PE's output checked against scipy."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from hwgen.catalog import system_of
from hwgen.cli.main import main
from hwgen.discovery import load_spec
from hwgen.errors import ParameterError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sobel.py"
SPEC = f"{EXAMPLE}:SobelMagnitude"

NARROW = f'''
from hwgen.discovery import load_spec

SobelMagnitude = load_spec({str(EXAMPLE)!r} + ":SobelMagnitude", "KERNEL")


class NarrowSobel(SobelMagnitude):
    """The Sobel example with addresses for one frame only."""
    name = "narrow-sobel"

    def __init__(self, *, width=64, height=64, pixel_bits=8):
        super().__init__(width=width, height=height, pixel_bits=pixel_bits)
'''


def scipy_sobel_magnitude(image):
    image = np.asarray(image, dtype=np.int64)
    magnitude = np.abs(ndimage.sobel(image, axis=1)) + np.abs(ndimage.sobel(image, axis=0))
    return np.minimum(magnitude, 255)[1:-1, 1:-1]


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_system_of_a_user_pe_widens_its_addresses():
    pe = load_spec(SPEC, "KERNEL")(width=8, height=5)
    system = system_of(pe, 5)
    # Five frames of 8x5 inputs and 6x3 outputs side by side: 5 * 58 = 290 elements, 9 bits.
    assert system.count == 5 and system.addr_width == 9
    assert all(copy.addr_width == 9 and (copy.width, copy.height) == (8, 5)
               for copy in system.pes)
    assert len(system.channels) == 5                 # an unlimited link: a channel per PE


def test_sim_pes_runs_every_copy_on_its_own_frame(tmp_path, capsys):
    report = tmp_path / "sim.json"
    assert main(["sim", SPEC, "--width", "8", "--height", "5", "--pes", "3", "--engine",
                 "pysim", "--seed", "7", "--json", str(report), "-q"]) == 0
    data = json.loads(report.read_text())
    assert data["result_matches_numpy_model"] and data["fetch_model_matches"]
    assert data["system"]["pes"] == 3
    outputs = 6 * 3
    assert data["system"]["ops"] == 3 * 11 * outputs
    assert data["system"]["bytes_read"] == 3 * 9 * outputs
    # The numpy model is the PE's own reference: hold it against scipy on the frames sim drew.
    rng = np.random.default_rng(7)
    pe = load_spec(SPEC, "KERNEL")(width=8, height=5)
    for _ in range(3):
        frame = rng.integers(0, 256, size=(5, 8))
        assert (pe.reference(frame) == scipy_sobel_magnitude(frame)).all()


def test_build_pes_writes_the_system(tmp_path, capsys):
    out = tmp_path / "build"
    assert main(["build", SPEC, "--width", "8", "--height", "5", "--pes", "2",
                 "--no-instrument", "--out", str(out)]) == 0
    assert "bare PE, no HMM" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["system"]["pes"] == 2 and manifest["parameters"]["width"] == 8
    assert "module sobel_width8_height5_pixel_bits8_x2" in (
        out / "sobel_width8_height5_pixel_bits8_x2.v").read_text()


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_a_pe_that_cannot_widen_its_addresses_is_refused(tmp_path, capsys):
    path = tmp_path / "narrow.py"
    path.write_text(NARROW)
    spec = f"{path}:NarrowSobel"
    # One 8x5 frame needs 58 elements: 7-bit addresses (2 * 40 - 1 < 128) reach 2 frames.
    with pytest.raises(ParameterError, match="^pes must be at most 2 for narrow-sobel"):
        system_of(load_spec(spec, "KERNEL")(width=8, height=5), 3)
    assert main(["sim", spec, "--width", "8", "--height", "5", "--pes", "3", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwgen: error: --pes must be at most 2 for narrow-sobel")
    assert main(["sim", spec, "--width", "8", "--height", "5", "--pes", "2", "--engine",
                 "pysim", "-q"]) == 0
