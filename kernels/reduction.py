"""Reductions over a window, and the pipelined trees that compute them.

A :class:`Reduction` is a small description: how two values combine in hardware, and the numpy
function that does the same for references. Adding a new window filter (say a sum) means adding
one of these.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np
from amaranth.hdl import Mux, Signal

__all__ = ["Reduction", "REDUCTIONS", "OP_ALIASES", "reduction", "register_positions", "reduce_tree",
           "tree_depth"]


@dataclass(frozen=True)
class Reduction:
    """An associative, commutative reduction of unsigned pixels.

    Parameters
    ----------
    name : str
        Name used in parameters and manifests.
    combine : callable
        ``combine(a, b)`` returns the Amaranth expression for two values of the same shape.
    reference : callable
        numpy reduction with an ``axis`` argument (``np.max``), for reference models.
    """
    name: str
    combine: Callable
    reference: Callable


REDUCTIONS = {
    "max": Reduction("max", lambda a, b: Mux(a > b, a, b), np.max),
    "min": Reduction("min", lambda a, b: Mux(a < b, a, b), np.min),
}

#: Morphology names for the reductions.
OP_ALIASES = {"dilation": "max", "erosion": "min"}


def reduction(op):
    """Look up a reduction by name (``max``, ``min``) or alias (``dilation``, ``erosion``)."""
    if isinstance(op, Reduction):
        return op
    name = OP_ALIASES.get(op, op)
    if name not in REDUCTIONS:
        allowed = ", ".join([*REDUCTIONS, *OP_ALIASES])
        raise ValueError(f"op must be one of {allowed}, not {op!r}")
    return REDUCTIONS[name]


def tree_depth(count):
    """Levels of a binary tree over ``count`` leaves."""
    return max(0, (count - 1).bit_length())


def register_positions(levels, stages):
    """Where ``stages`` pipeline registers split a chain of ``levels`` tree levels evenly.

    The result lives in a FIFO whose write is itself a register, so ``stages`` registers make
    ``stages + 1`` segments of about ``levels / (stages + 1)`` levels each. Position ``p`` is a
    register in front of level ``p`` (0 registers the leaves).
    """
    if not 0 <= stages <= levels:
        raise ValueError(f"stages must be between 0 and {levels}, not {stages!r}")
    return tuple((k + 1) * levels // (stages + 1) for k in range(stages))


def reduce_tree(m, op, values, depth, registers, *, name):
    """Reduce ``values`` with a binary tree of ``op``, with registers at chosen levels.

    Parameters
    ----------
    m : Module
    op : Reduction
    values : list of Value
        Leaves, all the same shape.
    depth : int
        Levels of the tree, at least ``tree_depth(len(values))``. Extra levels pass the value
        through, so trees with fewer leaves can be given the latency of bigger ones.
    registers : collection of int
        Positions in ``0..depth``: a register in front of level ``p`` (``depth``: after the last).
    name : str
        Prefix for the register names.

    Returns
    -------
    Value
        The reduction, ``len(registers)`` cycles after the leaves.
    """
    if depth < tree_depth(len(values)):
        raise ValueError("not enough levels for the tree")

    def register(level, level_values):
        if level not in registers:
            return level_values
        regs = [Signal.like(values[0], name=f"{name}_r{level}_{index}")
                for index in range(len(level_values))]
        m.d.sync += [r.eq(v) for r, v in zip(regs, level_values)]
        return regs

    level_values = list(values)
    for level in range(depth):
        level_values = register(level, level_values)
        paired = [op.combine(level_values[i], level_values[i + 1])
                  for i in range(0, len(level_values) - 1, 2)]
        if len(level_values) % 2:
            paired.append(level_values[-1])
        level_values = paired
    (result,) = register(depth, level_values)
    return result
