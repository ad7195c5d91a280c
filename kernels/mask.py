"""Structuring elements: which entries of an N x M window take part in the reduction.

The shapes are OpenCV's (``cv2.getStructuringElement`` with ``MORPH_RECT``, ``MORPH_CROSS`` and
``MORPH_ELLIPSE`` of size ``(M, N)`` and the default anchor, the centre), the convention Vitis
Vision follows too, so a mask a user knows from either gives the same entries here.
"""

import numpy as np

__all__ = ["MASK_SHAPES", "mask_problem", "structuring_element"]

MASK_SHAPES = ("rect", "cross", "ellipse")


def _ellipse(rows, cols):
    """OpenCV's ellipse: with ``r = rows // 2`` and ``c = cols // 2``, row ``i`` (``dy = i - r``)
    holds the columns ``c - dx .. c + dx`` with ``dx = round(c * sqrt(1 - dy**2 / r**2))``
    (rounded half to even), clipped to the window; a single row holds the centre only."""
    r, c = rows // 2, cols // 2
    element = np.zeros((rows, cols), dtype=bool)
    for i in range(rows):
        dy = i - r
        dx = int(np.rint(c * np.sqrt((r * r - dy * dy) / (r * r)))) if r else 0
        element[i, max(c - dx, 0):min(c + dx + 1, cols)] = True
    return element


def structuring_element(mask, rows, cols):
    """Build an ``rows x cols`` boolean structuring element.

    Parameters
    ----------
    mask : str or array-like
        ``"rect"`` (every entry), ``"cross"`` (the middle row and the middle column; for an even
        size the middle is index ``size // 2``), ``"ellipse"`` (OpenCV's ``MORPH_ELLIPSE``: 3x3
        is the cross, 5x5 has 17 entries), or an explicit 2-D array of 0/1 of shape
        ``(rows, cols)``. The named shapes equal OpenCV's ``getStructuringElement`` of size
        ``(cols, rows)``.
    rows, cols : int
        Window size N x M, each at least 1.

    Returns
    -------
    numpy.ndarray of bool, shape (rows, cols), with at least one entry set.
    """
    for name, value in (("rows", rows), ("cols", cols)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
    problem = mask_problem(mask, rows, cols)
    if problem is not None:
        raise ValueError(problem)
    if isinstance(mask, str):
        if mask == "rect":
            return np.ones((rows, cols), dtype=bool)
        if mask == "cross":
            element = np.zeros((rows, cols), dtype=bool)
            element[rows // 2, :] = True
            element[:, cols // 2] = True
            return element
        return _ellipse(rows, cols)
    return np.asarray(mask).astype(bool)


def mask_problem(mask, rows, cols):
    """What is wrong with ``mask`` for a ``rows x cols`` window, as the message
    :func:`structuring_element` raises (it begins with ``mask``), or ``None``."""
    if isinstance(mask, str):
        if mask not in MASK_SHAPES:
            return f"mask must be one of {', '.join(MASK_SHAPES)} or a 0/1 array, not {mask!r}"
        return None
    array = np.asarray(mask)
    if array.ndim != 2:
        return f"mask must be a 2-D array of 0/1, not a {array.ndim}-D array"
    if array.shape != (rows, cols):
        return (f"mask shape {array.shape[0]}x{array.shape[1]} must equal the window size "
                f"{rows}x{cols}")
    if not np.isin(array, (0, 1)).all():
        return "mask entries must be 0 or 1"
    if not array.any():
        return "mask must have at least one entry set to 1"
    return None
