"""hwgen's structuring elements and filters against OpenCV's, the convention users (and Vitis
Vision) bring with them."""

import cv2
import numpy as np
import pytest

from hwgen.kernels import WindowFilter
from hwgen.kernels.mask import structuring_element
from hwgen.sim import run_window_filter

OPENCV_SHAPES = {"rect": cv2.MORPH_RECT, "cross": cv2.MORPH_CROSS, "ellipse": cv2.MORPH_ELLIPSE}


@pytest.mark.parametrize("shape", list(OPENCV_SHAPES))
def test_named_masks_equal_opencv_structuring_elements_of_every_size(shape):
    for rows in range(1, 26):
        for cols in range(1, 26):
            expected = cv2.getStructuringElement(OPENCV_SHAPES[shape], (cols, rows)).astype(bool)
            np.testing.assert_array_equal(structuring_element(shape, rows, cols), expected,
                                          err_msg=f"{shape} {rows}x{cols}")


def test_ellipse_of_small_windows_is_what_opencv_users_know():
    # The shapes the issue was found with: a plus at 3x3, 17 entries at 5x5.
    assert structuring_element("ellipse", 3, 3).astype(int).tolist() == [[0, 1, 0], [1, 1, 1],
                                                                          [0, 1, 0]]
    assert structuring_element("ellipse", 5, 5).sum() == 17


def _opencv_valid_region(op, image, element):
    """cv2.dilate / cv2.erode with the default anchor (the centre, ``size // 2``), cropped to
    the pixels whose whole window lies inside the image (where OpenCV's border mode plays no
    part): output (y, x) of hwgen is OpenCV's (y + N // 2, x + M // 2)."""
    n, m = element.shape
    kernel = element.astype(np.uint8)
    full = (cv2.dilate if op == "max" else cv2.erode)(image, kernel)
    h, w = image.shape
    return full[n // 2: n // 2 + h - n + 1, m // 2: m // 2 + w - m + 1]


# Windows odd and even, square and not; every buffer; 8- and 16-bit pixels.
CASES = [
    ("max", "ellipse", (5, 5), "line", 4, 8),
    ("min", "ellipse", (5, 5), "smart", 3, 8),
    ("max", "ellipse", (4, 6), "none", 2, 8),
    ("min", "ellipse", (3, 7), "line", 2, 16),
    ("max", "cross", (4, 4), "smart", 2, 16),
    ("min", "cross", (3, 5), "none", 1, 8),
    ("max", "rect", (2, 3), "line", 8, 8),
    ("min", "ellipse", (7, 4), "smart", 4, 8),
    ("max", "ellipse", (6, 6), "line", 1, 8),
]


@pytest.mark.parametrize("op,shape,size,buffer,unroll,bits", CASES,
                         ids=["-".join(map(str, case)) for case in CASES])
def test_simulated_filter_equals_opencv_dilate_and_erode(op, shape, size, buffer, unroll, bits):
    height, width = 14, 16
    image = np.random.default_rng(sum(size) * 31 + unroll).integers(
        0, 1 << bits, (height, width)).astype(np.uint8 if bits == 8 else np.uint16)
    pe = WindowFilter(op, size, mask=shape, pixel_bits=bits, width=width, height=height,
                      unroll=unroll, buffer=buffer)
    run = run_window_filter(pe, image)
    element = cv2.getStructuringElement(OPENCV_SHAPES[shape], (size[1], size[0]))
    np.testing.assert_array_equal(run.image, _opencv_valid_region(op, image, element))
