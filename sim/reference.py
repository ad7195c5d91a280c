"""The numpy model of a window filter, to check what a simulated PE wrote."""

import numpy as np

__all__ = ["window_filter_model"]

_REDUCTIONS = {"max": np.maximum, "min": np.minimum}


def window_filter_model(image, mask, op):
    """The output a window filter must write for ``image``: at every pixel of the valid region
    (the windows that lie inside the image), the maximum (``op="max"``, dilation) or minimum
    (``"min"``, erosion) of the pixels under the active entries of ``mask``.

    Computed as the element-wise reduction of the image's views shifted by each active entry.
    """
    if op not in _REDUCTIONS:
        raise ValueError(f"op must be one of {', '.join(_REDUCTIONS)}, not {op!r}")
    image, mask = np.asarray(image), np.asarray(mask, dtype=bool)
    rows, cols = mask.shape
    out_h, out_w = image.shape[0] - rows + 1, image.shape[1] - cols + 1
    views = [image[i:i + out_h, j:j + out_w] for i, j in zip(*np.nonzero(mask))]
    return _REDUCTIONS[op].reduce(views)
