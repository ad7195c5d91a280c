"""Images in and out of `hwgen sim` in every format it takes, at 8 and 16 bits, checked against
files written and read by hand and a numpy model of the filter; structuring elements from
files."""

import numpy as np
import pytest

import reference as ref
from greyscale_files import read_pgm, read_png, write_pgm, write_png
from hwgen.cli.main import main

SHAPE = (7, 11)


def _image(bits, seed=5):
    return np.random.default_rng(seed).integers(0, 1 << bits, SHAPE)


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("suffix", [".npy", ".png", ".pgm"])
def test_every_input_format_at_8_and_16_bits(suffix, bits, tmp_path, capsys):
    image = _image(bits)
    path = tmp_path / f"in{suffix}"
    {".npy": lambda: np.save(path, image.astype(np.uint16)),
     ".png": lambda: write_png(path, image, bits),
     ".pgm": lambda: write_pgm(path, image, bits)}[suffix]()
    out = tmp_path / "out.npy"
    assert main(["sim", "dilation", "--input", str(path), "--pixel-bits", str(bits),
                 "--output", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out), ref.window_filter(image, ref.rect(3, 3), "max"))


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("suffix", [".npy", ".png", ".pgm"])
def test_every_output_format_at_8_and_16_bits(suffix, bits, tmp_path, capsys):
    image = _image(bits, seed=9)
    source = tmp_path / "in.npy"
    np.save(source, image)
    out = tmp_path / f"out{suffix}"
    assert main(["sim", "erosion", "--mask", "cross", "--input", str(source), "--pixel-bits",
                 str(bits), "--output", str(out), "-q"]) == 0
    expected = ref.window_filter(image, ref.cross(3, 3), "min")
    if suffix == ".npy":
        written = np.load(out)
        assert written.dtype == (np.uint8 if bits == 8 else np.uint16)
    elif suffix == ".png":
        written, depth = read_png(out)
        assert depth == bits
    else:
        written, maxval = read_pgm(out)
        assert maxval == (1 << bits) - 1
    np.testing.assert_array_equal(written, expected)


def test_sixteen_bit_pixels_need_sixteen_bit_filters(tmp_path, capsys):
    path = tmp_path / "g16.png"
    write_png(path, _image(16), 16)
    assert main(["sim", "dilation", "--input", str(path)]) == 2
    err = capsys.readouterr().err
    assert "pixel values must be between 0 and 255" in err and "--pixel-bits" in err


@pytest.mark.parametrize("text", ["010\n111\n011\n", "0 1 0\n1 1 1\n0 1 1\n",
                                  "0,1,0\n1,1,1\n0,1,1\n"])
def test_a_mask_file_gives_the_window_size(text, tmp_path, capsys):
    mask = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool)
    (tmp_path / "mask.txt").write_text(text)
    image = _image(8)
    np.save(tmp_path / "in.npy", image)
    out = tmp_path / "out.npy"
    assert main(["sim", "dilation", "--mask", str(tmp_path / "mask.txt"), "--input",
                 str(tmp_path / "in.npy"), "--output", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out), ref.window_filter(image, mask, "max"))


def test_a_mask_file_of_another_shape_than_size_is_one_line(tmp_path, capsys):
    np.save(tmp_path / "mask.npy", np.ones((3, 5), dtype=np.uint8))
    assert main(["build", "dilation", "--mask", str(tmp_path / "mask.npy"), "--size", "3x3",
                 "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert err == ("hwgen: error: --size 3x3 differs from the --mask file's shape 3x5; leave "
                   "--size out or make them match\n")
    assert not (tmp_path / "never").exists()
    # Without --size, the file's 3x5 is the window.
    assert main(["build", "dilation", "--mask", str(tmp_path / "mask.npy"), "--width", "16",
                 "--height", "8", "--out", str(tmp_path / "b"), "-q"]) == 0
    assert [p.name for p in (tmp_path / "b").glob("*.v")][0].startswith("dilation_3x5_")
