"""Independent reference models for the tests (numpy only, nothing from hwgen)."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def window_filter(image, mask, op):
    """Reduce every complete window: out[y, x] = op over img[y+i, x+j] for active (i, j)."""
    mask = np.asarray(mask, dtype=bool)
    windows = sliding_window_view(np.asarray(image), mask.shape)
    values = windows[..., mask]
    return values.max(axis=-1) if op == "max" else values.min(axis=-1)


def rect(n, m):
    return np.ones((n, m), dtype=bool)


def cross(n, m):
    mask = np.zeros((n, m), dtype=bool)
    mask[n // 2, :] = True
    mask[:, m // 2] = True
    return mask


def ellipse(n, m):
    """Entries whose centre lies inside the ellipse inscribed in the n x m box."""
    mask = np.zeros((n, m), dtype=bool)
    for i in range(n):
        for j in range(m):
            di = (i + 0.5) - n / 2
            dj = (j + 0.5) - m / 2
            mask[i, j] = (di / (n / 2)) ** 2 + (dj / (m / 2)) ** 2 <= 1
    return mask


MASKS = {"rect": rect, "cross": cross, "ellipse": ellipse}


def expected_reads(buffer, height, width, mask, unroll):
    """Closed-form pixel reads per frame (DESIGN section 3)."""
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
