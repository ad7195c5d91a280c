"""Structuring elements: which entries of an N x M window take part in the reduction."""

import numpy as np

__all__ = ["MASK_SHAPES", "structuring_element"]

MASK_SHAPES = ("rect", "cross", "ellipse")


def structuring_element(mask, rows, cols):
    """Build an ``rows x cols`` boolean structuring element.

    Parameters
    ----------
    mask : str or array-like
        ``"rect"`` (every entry), ``"cross"`` (the middle row and the middle column; for an even
        size the middle is index ``size // 2``), ``"ellipse"`` (entries whose centre lies inside
        the ellipse inscribed in the window, semi-axes ``rows / 2`` and ``cols / 2``), or an
        explicit 2-D array of 0/1 of shape ``(rows, cols)``.
    rows, cols : int
        Window size N x M, each at least 1.

    Returns
    -------
    numpy.ndarray of bool, shape (rows, cols), with at least one entry set.
    """
    for name, value in (("rows", rows), ("cols", cols)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
    if isinstance(mask, str):
        if mask == "rect":
            element = np.ones((rows, cols), dtype=bool)
        elif mask == "cross":
            element = np.zeros((rows, cols), dtype=bool)
            element[rows // 2, :] = True
            element[:, cols // 2] = True
        elif mask == "ellipse":
            i = (np.arange(rows) + 0.5 - rows / 2) / (rows / 2)
            j = (np.arange(cols) + 0.5 - cols / 2) / (cols / 2)
            element = i[:, None] ** 2 + j[None, :] ** 2 <= 1.0
        else:
            raise ValueError(f"mask must be one of {', '.join(MASK_SHAPES)} or a 0/1 array, "
                             f"not {mask!r}")
        return element
    array = np.asarray(mask)
    if array.ndim != 2:
        raise ValueError(f"mask must be a 2-D array of 0/1, not a {array.ndim}-D array")
    if array.shape != (rows, cols):
        raise ValueError(f"mask shape {array.shape[0]}x{array.shape[1]} must equal the window "
                         f"size {rows}x{cols}")
    if not np.isin(array, (0, 1)).all():
        raise ValueError("mask entries must be 0 or 1")
    if not array.any():
        raise ValueError("mask must have at least one entry set to 1")
    return array.astype(bool)
