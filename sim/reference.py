"""The numpy model of a window filter, to check what a simulated PE wrote."""

import numpy as np

__all__ = ["window_filter_model"]

_REDUCTIONS = {"max": np.maximum, "min": np.minimum}


def window_filter_model(image, mask, op):
    """The output a window filter must write for ``image``: at every pixel of the valid region
    (the windows that lie inside the image), the maximum (``op="max"``, dilation) or minimum
    (``"min"``, erosion) of the pixels under the active entries of ``mask``.

    Computed as the element-wise reduction of the image's views shifted by each active entry,
    one view at a time (the memory of one output, whatever the mask's size).
    """
    if op not in _REDUCTIONS:
        raise ValueError(f"op must be one of {', '.join(_REDUCTIONS)}, not {op!r}")
    image, mask = np.asarray(image), np.asarray(mask, dtype=bool)
    rows, cols = mask.shape
    out_h, out_w = image.shape[0] - rows + 1, image.shape[1] - cols + 1
    reduce = _REDUCTIONS[op]
    entries = list(zip(*np.nonzero(mask)))
    first_i, first_j = entries[0]
    out = image[first_i:first_i + out_h, first_j:first_j + out_w].copy()
    for i, j in entries[1:]:
        reduce(out, image[i:i + out_h, j:j + out_w], out=out)
    return out
