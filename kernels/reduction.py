"""Reductions over a window, and the pipelined trees that compute them.

A :class:`Reduction` is a small description: how two values combine in hardware, and the numpy
function that does the same for references. Adding a new window filter (say a sum) means adding
one of these.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np
from amaranth.hdl import Mux, Signal

__all__ = ["Reduction", "REDUCTIONS", "OP_ALIASES", "reduction", "register_levels", "reduce_tree"]


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


def register_levels(levels, stages):
    """Spread ``stages`` pipeline registers evenly over ``levels`` tree levels.

    Returns a tuple of ``levels`` booleans: whether a register follows each level. The last level
    is always registered when ``stages >= 1``, so a tree's output comes from a register.
    """
    if not 0 <= stages <= levels:
        raise ValueError(f"stages must be between 0 and {levels}, not {stages!r}")
    chosen = {(k + 1) * levels // stages - 1 for k in range(stages)} if stages else set()
    return tuple(level in chosen for level in range(levels))


def reduce_tree(m, op, values, registered, *, name):
    """Reduce ``values`` with a binary tree of ``op``, with registers after chosen levels.

    Parameters
    ----------
    m : Module
    op : Reduction
    values : list of Value
        Leaves, all the same shape.
    registered : tuple of bool
        One entry per tree level (at least ``tree_depth(len(values))`` of them); a register
        follows every level whose entry is true. Extra levels pass the value through, so trees
        with fewer leaves can be padded to the latency of bigger ones.
    name : str
        Prefix for the register names.

    Returns
    -------
    Value
        The reduction, ``sum(registered)`` cycles after the leaves.
    """
    if len(registered) < tree_depth(len(values)):
        raise ValueError("not enough levels for the tree")
    level_values = list(values)
    for level, reg in enumerate(registered):
        paired = [op.combine(level_values[i], level_values[i + 1])
                  for i in range(0, len(level_values) - 1, 2)]
        if len(level_values) % 2:
            paired.append(level_values[-1])
        if reg:
            regs = []
            for index, value in enumerate(paired):
                r = Signal.like(values[0], name=f"{name}_l{level}_{index}")
                m.d.sync += r.eq(value)
                regs.append(r)
            paired = regs
        level_values = paired
    (result,) = level_values
    return result
