"""Saturating counts: a count that stops at its maximum and remembers that it did.

Every counter of the HMM is a :func:`count_layout` value: ``count`` in the low bits and a sticky
``overflow`` bit above it, in one register. A count that would pass its maximum stays at the
maximum and sets ``overflow``, so the host can tell an exact value (``overflow == 0``) from a lower
bound (``overflow == 1``).
"""

from amaranth.hdl import Cat, Mux, Value, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In

__all__ = ["Counters", "count_layout", "saturating_sum", "add_saturating"]


def count_layout(bits):
    """Layout of a saturating count of ``bits`` bits: ``count``, then the sticky ``overflow``."""
    if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
        raise ValueError(f"counter bits must be a positive integer, not {bits!r}")
    return data.StructLayout({"count": unsigned(bits), "overflow": unsigned(1)})


def saturating_sum(counter, amount):
    """The ``count_layout`` value of ``counter + amount``: saturated, ``overflow`` sticky.

    Parameters
    ----------
    counter : View of count_layout
    amount : Value or int
        What to add; a 1-bit amount needs no adder wider than the count.
    """
    amount = Value.cast(amount)
    count, overflow, both = counter.count, counter.overflow, counter.as_value()
    bits = len(count)
    if len(amount) == 1:
        # Adding one only carries into the flag's bit from an all-ones count.
        return Mux(count.all(), Cat(count, overflow | amount), both + amount)
    total = count + amount
    return Mux(total[bits:].any(), (1 << (bits + 1)) - 1, Cat(total[:bits], overflow))


def add_saturating(m, counter, amount, *, when=None):
    """Add ``amount`` to the saturating register ``counter`` at the next ``sync`` edge.

    Parameters
    ----------
    m : Module
    counter : View of count_layout
        The register to update.
    amount : Value or int
    when : Value or None
        Add only in cycles where this is high.
    """
    amount = Value.cast(amount)
    condition = amount if len(amount) == 1 else amount.any()
    if when is not None:
        condition = when & condition
    with m.If(condition):
        m.d.sync += counter.as_value().eq(saturating_sum(counter, amount if len(amount) > 1 else 1))


class Counters(wiring.Component):
    """A part of the HMM made of saturating counts (:func:`count_layout`, ``bits`` wide).

    Parameters
    ----------
    bits : int
        Width of every count; a count saturates and sets its overflow flag.
    members : dict
        The part's own members, after ``enable`` and ``clear``.

    Members
    -------
    enable : In(1)
        Count this cycle.
    clear : In(1)
        Zero every count (and its flag) at the next edge; this cycle is not counted.
    """

    def __init__(self, bits, members):
        count_layout(bits)      # checks bits
        self._bits = bits
        super().__init__({"enable": In(1), "clear": In(1), **members})

    @property
    def bits(self):
        return self._bits
