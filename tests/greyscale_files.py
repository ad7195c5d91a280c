"""Greyscale PNG and PGM files written and read by hand (zlib and the formats' specifications),
to test hwgen's image files without trusting the library it uses for them."""

import struct
import zlib

import numpy as np


def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def write_png(path, image, bits):
    """A greyscale PNG of 8 or 16 bits per pixel, every row unfiltered."""
    height, width = image.shape
    dtype = ">u1" if bits == 8 else ">u2"
    raw = b"".join(b"\x00" + row.astype(dtype).tobytes() for row in image)
    header = struct.pack(">IIBBBBB", width, height, bits, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
                     + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(path):
    """``(image, bits)`` of a non-interlaced greyscale PNG of 8 or 16 bits, any row filters."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat = 8, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, bits, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert colour == 0 and interlace == 0 and bits in (8, 16)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    step = bits // 8
    stride = width * step
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b = previous[i]
            c = previous[i - step] if i >= step else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]) & 0xFF
        rows.append(bytes(line))
        previous = line
    dtype = ">u1" if bits == 8 else ">u2"
    return np.frombuffer(b"".join(rows), dtype=dtype).reshape(height, width).astype(np.int64), bits


def write_pgm(path, image, bits):
    """A binary (P5) PGM, maxval 255 or 65535 (16-bit samples most significant byte first)."""
    height, width = image.shape
    maxval = (1 << bits) - 1
    dtype = ">u1" if bits == 8 else ">u2"
    path.write_bytes(f"P5\n{width} {height}\n{maxval}\n".encode() + image.astype(dtype).tobytes())


def read_pgm(path):
    """``(image, maxval)`` of a binary PGM."""
    data = path.read_bytes()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b"#":
            at = data.index(b"\n", at)
            continue
        end = at
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[at:end])
        at = end
    assert fields[0] == b"P5"
    width, height, maxval = (int(f) for f in fields[1:])
    dtype = ">u1" if maxval < 256 else ">u2"
    pixels = np.frombuffer(data[at + 1:], dtype=dtype)
    return pixels.reshape(height, width).astype(np.int64), maxval
