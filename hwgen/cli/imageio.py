"""Reading images and structuring elements from files."""

from pathlib import Path

import numpy as np

from ..errors import HwgenError

__all__ = ["read_image", "read_mask"]


def read_image(path):
    """Read a 2-D integer image: a ``.npy`` array, or an 8/16-bit greyscale PNG or PGM."""
    path = Path(path)
    if not path.is_file():
        raise HwgenError(f"--input: no such file {str(path)!r}")
    if path.suffix.lower() == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise HwgenError(f"--input: cannot read {str(path)!r} as a .npy array ({error})") from None
        if array.ndim != 2 or not (np.issubdtype(array.dtype, np.integer)
                                   or np.issubdtype(array.dtype, np.bool_)):
            raise HwgenError(f"--input: {str(path)!r} must hold a 2-D integer array, not a "
                             f"{array.ndim}-D {array.dtype} array")
        return array.astype(np.int64)
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(path) as image:
            if image.mode not in ("L", "I;16", "I;16B", "I"):
                raise HwgenError(f"--input: {str(path)!r} must be a greyscale image (PNG/PGM, mode L "
                                 f"or I;16), not mode {image.mode}")
            return np.asarray(image).astype(np.int64)
    except (OSError, UnidentifiedImageError) as error:
        raise HwgenError(f"--input: cannot read {str(path)!r}: use a .npy array or a greyscale "
                         f"PNG/PGM ({error})") from None


def read_mask(path):
    """Read a structuring element: a ``.npy`` 2-D array of 0/1, or a text file of 0/1 rows."""
    path = Path(path)
    if not path.is_file():
        raise HwgenError(f"--mask must be rect, cross, ellipse or a file; no such file {str(path)!r}")
    try:
        if path.suffix.lower() == ".npy":
            array = np.load(path, allow_pickle=False)
        else:
            rows = [line.replace(",", " ").split() for line in path.read_text().splitlines()]
            rows = [row for row in rows if row]
            if len({len(row) for row in rows}) != 1:
                raise ValueError("rows have different lengths")
            array = np.array([[int(v) for v in row] for row in rows])
    except (OSError, ValueError) as error:
        raise HwgenError(f"--mask: cannot read {str(path)!r} as 0/1 rows or a .npy array "
                         f"({error})") from None
    if array.ndim != 2:
        raise HwgenError(f"--mask: {str(path)!r} must hold a 2-D array of 0/1")
    return array
