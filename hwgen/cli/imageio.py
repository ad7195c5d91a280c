"""Reading and writing images, and reading structuring elements, as files."""

import io
import re
from pathlib import Path

import numpy as np

from ..errors import HwgenError

__all__ = ["IMAGE_SUFFIXES", "read_image", "encode_image", "read_mask"]

#: The image files hwgen reads and writes.
IMAGE_SUFFIXES = (".npy", ".png", ".pgm")
# Pillow's modes of greyscale images of 1 to 16 bits (a 16-bit PGM opens as "I" in some versions).
_GREY_MODES = ("L", "I;16", "I;16B", "I;16L", "I")


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
            if image.mode not in _GREY_MODES:
                raise HwgenError(f"--input: {str(path)!r} must be a greyscale image (PNG/PGM, mode L "
                                 f"or I;16), not mode {image.mode}")
            return np.asarray(image).astype(np.int64)
    except (OSError, UnidentifiedImageError) as error:
        raise HwgenError(f"--input: cannot read {str(path)!r}: use a .npy array or a greyscale "
                         f"PNG/PGM ({error})") from None


def encode_image(path, image, pixel_bits):
    """The bytes of ``image`` as the file ``path`` names: ``.npy`` of the smallest unsigned type
    that holds ``pixel_bits`` (uint8 or uint16), or an 8-bit (up to 8 bits per pixel) or 16-bit
    greyscale PNG or PGM."""
    suffix = Path(path).suffix.lower()
    if suffix not in IMAGE_SUFFIXES:
        raise HwgenError(f"--output must end in {', '.join(IMAGE_SUFFIXES)}, not "
                         f"{Path(path).name!r}")
    dtype = np.uint8 if pixel_bits <= 8 else np.uint16
    image = np.asarray(image)
    if image.size and (image.min() < 0 or image.max() > np.iinfo(dtype).max):
        raise ValueError(f"pixel values {image.min()}..{image.max()} do not fit {pixel_bits} bits")
    stream = io.BytesIO()
    if suffix == ".npy":
        np.save(stream, image.astype(dtype))
        return stream.getvalue()
    from PIL import Image
    height, width = image.shape
    # Raw bytes in a mode named outright: Pillow's guess from an array's type has changed
    # between versions (a uint16 array became "I;16" in one, refused "I;16" as a mode in another).
    if dtype == np.uint8:
        picture = Image.frombytes("L", (width, height), image.astype(np.uint8).tobytes())
    else:
        picture = Image.frombytes("I;16", (width, height), image.astype("<u2").tobytes())
    picture.save(stream, format="PNG" if suffix == ".png" else "PPM")
    return stream.getvalue()


def read_mask(path):
    """Read a structuring element: a ``.npy`` 2-D array of 0/1, or a text file of 0/1 rows whose
    entries are separated by spaces or commas, or not at all (``010``)."""
    path = Path(path)
    if not path.is_file():
        raise HwgenError(f"--mask must be rect, cross, ellipse or a file; no such file {str(path)!r}")
    try:
        if path.suffix.lower() == ".npy":
            array = np.load(path, allow_pickle=False)
        else:
            rows = []
            for line in path.read_text().splitlines():
                line = line.strip()
                if line:
                    rows.append(list(line) if re.fullmatch(r"[01]+", line)
                                else line.replace(",", " ").split())
            if not rows:
                raise ValueError("the file is empty: it needs at least one row such as 111")
            if len({len(row) for row in rows}) != 1:
                raise ValueError("rows have different lengths")
            array = np.array([[int(v) for v in row] for row in rows])
    except (OSError, ValueError) as error:
        raise HwgenError(f"--mask: cannot read {str(path)!r} as 0/1 rows or a .npy array "
                         f"({error})") from None
    if array.ndim != 2:
        raise HwgenError(f"--mask: {str(path)!r} must hold a 2-D array of 0/1")
    return array
