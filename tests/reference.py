"""Independent reference models for the tests (numpy and OpenCV, nothing from hwgen)."""

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def window_filter(image, mask, op):
    """Reduce every complete window: out[y, x] = op over img[y+i, x+j] for active (i, j)."""
    mask = np.asarray(mask, dtype=bool)
    windows = sliding_window_view(np.asarray(image), mask.shape)
    values = windows[..., mask]
    return values.max(axis=-1) if op == "max" else values.min(axis=-1)


def opencv_element(shape, n, m):
    """OpenCV's structuring element of an n x m window (``getStructuringElement`` takes the
    size as width x height)."""
    return cv2.getStructuringElement(shape, (m, n)).astype(bool)


def rect(n, m):
    return opencv_element(cv2.MORPH_RECT, n, m)


def cross(n, m):
    return opencv_element(cv2.MORPH_CROSS, n, m)


def ellipse(n, m):
    return opencv_element(cv2.MORPH_ELLIPSE, n, m)


MASKS = {"rect": rect, "cross": cross, "ellipse": ellipse}


def expected_reads(buffer, height, width, mask, unroll):
    """Closed-form pixel reads per frame (docs/architecture.md, "Fetch patterns")."""
    n, m = mask.shape
    k = int(mask.sum())
    out_h, out_w = height - n + 1, width - m + 1
    if buffer == "none":
        return k * out_h * out_w
    if buffer == "line":
        return height * width
    strips = -(-out_h // unroll)
    rows = [min(unroll, out_h - s * unroll) for s in range(strips)]
    return sum(width * (n + u - 1) for u in rows)
