"""Evaluate Amaranth values over many clock cycles at once, with numpy.

A profiler that samples a value's signals each cycle can compute the value afterwards for every
cycle in a few array operations, instead of asking the simulator to interpret the value's syntax
tree at every clock edge (what ``ctx.tick().sample(value)`` does). The arithmetic is Amaranth's
simulator's: operators give exact integers (Amaranth's result shapes are wide enough), and
slices, parts, concatenations and ``as_unsigned``/``as_signed`` cut them to their bits.
Columns hold int64 when every node of the value fits 62 bits, Python integers otherwise.
"""

import numpy as np
from amaranth.hdl import Value

from ..instrument._amaranth import rhs_signals, value_node

__all__ = ["Unsupported", "evaluate", "signals_of", "wide"]

#: Widths up to this many bits are computed in int64 (one bit of headroom for a sign).
INT64_BITS = 62


class Unsupported(Exception):
    """A value holds a node this module does not evaluate (a memory row, for example)."""


def signals_of(value):
    """The signals ``value`` reads, in a stable order; raises :class:`Unsupported` for a value
    it cannot evaluate."""
    value = Value.cast(value)
    _check(value)
    return list(rhs_signals(value))


def wide(value):
    """Whether some node of ``value`` is wider than :data:`INT64_BITS`."""
    value = Value.cast(value)
    node = value_node(value)
    if len(value) > INT64_BITS:
        return True
    return any(wide(child) for child in _children(node))


def _children(node):
    kind = node[0]
    if kind == "op":
        return node[2]
    if kind in ("slice",):
        return [node[1]]
    if kind == "part":
        return [node[1], node[2]]
    if kind == "concat":
        return node[1]
    if kind == "switch":
        return [node[1], *(case for _, case in node[2])]
    return []


def _check(value):
    node = value_node(value)
    if node[0] == "other":
        raise Unsupported(repr(value))
    for child in _children(node):
        _check(child)


def evaluate(value, columns, cycles, dtype):
    """``value`` in every cycle: an array of ``cycles`` integers.

    Parameters
    ----------
    value : Value
    columns : hwgen.instrument._amaranth.SignalDict
        Each signal ``value`` reads: its sampled values (an array of ``cycles``).
    cycles : int
    dtype : numpy dtype
        ``np.int64`` (when not :func:`wide`) or ``object``.
    """
    value = Value.cast(value)
    node = value_node(value)
    kind = node[0]
    if kind == "const":
        return np.full(cycles, node[1], dtype=dtype)
    if kind == "signal":
        return columns[node[1]].astype(dtype) if len(node[1]) else np.zeros(cycles, dtype=dtype)
    if kind == "op":
        return _operator(value, node[1], [evaluate(v, columns, cycles, dtype) for v in node[2]],
                         node[2], dtype)
    if kind == "slice":
        _, inner, start, stop = node
        return (_shift_right(evaluate(inner, columns, cycles, dtype), start, dtype)
                & _mask(stop - start, dtype))
    if kind == "part":
        _, inner, offset, width, stride = node
        shift = evaluate(offset, columns, cycles, dtype) * stride
        return (_shift_right(evaluate(inner, columns, cycles, dtype), shift, dtype)
                & _mask(width, dtype))
    if kind == "concat":
        result, position = np.zeros(cycles, dtype=dtype), 0
        for part in node[1]:
            width = len(part)
            result |= (evaluate(part, columns, cycles, dtype) & _mask(width, dtype)) << position
            position += width
        return result
    if kind == "switch":
        test = evaluate(node[1], columns, cycles, dtype)
        result = np.zeros(cycles, dtype=dtype)
        taken = np.zeros(cycles, dtype=bool)
        for patterns, case in node[2]:
            hit = matches(test, patterns, cycles) & ~taken
            result = np.where(hit, evaluate(case, columns, cycles, dtype), result)
            taken |= hit
        return result
    raise Unsupported(repr(value))


def matches(value, patterns, cycles):
    """Where ``value`` matches one of ``patterns`` (strings of ``0``/``1``/``-``, most
    significant bit first; None matches everything)."""
    if patterns is None:
        return np.ones(cycles, dtype=bool)
    found = np.zeros(cycles, dtype=bool)
    for pattern in patterns:
        care = int(pattern.replace("0", "1").replace("-", "0") or "0", 2)
        ones = int(pattern.replace("-", "0") or "0", 2)
        if value.dtype == object:
            found |= np.array([(v & care) == ones for v in value], dtype=bool)
        else:
            found |= (value & care) == ones
    return found


def _mask(width, dtype):
    mask = (1 << width) - 1
    return np.int64(mask) if dtype == np.int64 else mask


def _shift_right(values, shift, dtype):
    if dtype == np.int64:
        # numpy leaves shifts by 64 or more undefined; by 63 every bit is the sign already.
        shift = np.minimum(shift, 63)
    return values >> shift


def _operator(value, operator, operands, values, dtype):
    if len(operands) == 1:
        (a,), (inner,) = operands, values
        if operator in ("u", "s"):
            width = len(value)
            result = a & _mask(width, dtype)
            if operator == "s" and width:
                sign = (result >> (width - 1)) & 1
                result = result - (sign << width)
            return result
        if operator == "-":
            return -a
        if operator == "~":
            return ~a if value.shape().signed else ~a & _mask(len(value), dtype)
        if operator in ("b", "r|"):
            return (a != 0).astype(dtype)
        width = len(inner)
        bits = a & _mask(width, dtype)
        if operator == "r&":
            return (bits == _mask(width, dtype)).astype(dtype)
        if operator == "r^":
            parity = np.zeros(len(a), dtype=dtype)
            for bit in range(width):
                parity ^= (bits >> bit) & 1
            return parity
    elif len(operands) == 2:
        a, b = operands
        if operator in ("|", "&", "^", "+", "-", "*"):
            return {"|": np.bitwise_or, "&": np.bitwise_and, "^": np.bitwise_xor, "+": np.add,
                    "-": np.subtract, "*": np.multiply}[operator](a, b)
        if operator in ("//", "%"):
            zero = b == 0
            safe = np.where(zero, 1, b)
            result = a // safe if operator == "//" else a % safe
            return np.where(zero, 0, result).astype(dtype)
        if operator == "<<":
            return a << b
        if operator == ">>":
            return _shift_right(a, b, dtype)
        if operator in ("==", "!=", "<", "<=", ">", ">="):
            compare = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                       ">": np.greater, ">=": np.greater_equal}[operator]
            return compare(a, b).astype(dtype)
    raise Unsupported(f"operator {operator!r}")
