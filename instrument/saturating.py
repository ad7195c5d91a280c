"""Saturating counts: a count that stops at its maximum and remembers that it did.

Every counter of the HMM is a :func:`count_layout` value: ``count`` in the low bits and a sticky
``overflow`` bit above it, in one register. A count that would pass its maximum stays at the
maximum and sets ``overflow``, so the host can tell an exact value (``overflow == 0``) from a lower
bound (``overflow == 1``).

:func:`build_count` keeps such a count without a carry chain as long as the count behind its
input: the count is split into a low part of :data:`LOW_BITS` that adds the amount and a high
part that takes the low part's carry from a register, and whether the count saturates is decided
from registers as well. Counting one at a time, flags registered a cycle ahead tell
when the low part and the whole count are full, so the count is exact at every edge. Adding
amounts, the low part is shown a cycle late, beside the high part that has taken its carry: the
count then reaches its register :func:`count_lag` cycles after the edge that took the amount.
"""

from amaranth.hdl import Cat, Const, Mux, Signal, Value, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In

__all__ = ["Counters", "LOW_BITS", "amount_widths", "build_count", "count_lag", "count_layout",
           "saturating_sum"]

#: Width of the low part of a count, the one adder its input feeds (wider for wider amounts);
#: the high part's increment starts from registers.
LOW_BITS = 8


def count_layout(bits):
    """Layout of a saturating count of ``bits`` bits: ``count``, then the sticky ``overflow``."""
    if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
        raise ValueError(f"counter bits must be a positive integer, not {bits!r}")
    return data.StructLayout({"count": unsigned(bits), "overflow": unsigned(1)})


def amount_widths(amount_bits):
    """``amount_bits`` of a bank of counts as a tuple, checked: one positive width per count."""
    amount_bits = tuple(amount_bits)
    if not amount_bits or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1
                                  for w in amount_bits):
        raise ValueError(f"amount_bits must be a non-empty sequence of positive integers, not "
                         f"{amount_bits!r}")
    return amount_bits


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


def _low_bits(bits, amount_bits, low_bits):
    # An amount narrower than the low part carries into the high part at most once per edge.
    return min(bits, max(low_bits, amount_bits))


def count_lag(bits, amount_bits, *, low_bits=LOW_BITS):
    """Cycles a :func:`build_count` count of ``bits`` bits, adding amounts of ``amount_bits``,
    takes to reach its register after the edge that takes the amount: 0 or 1."""
    return int(amount_bits > 1 and _low_bits(bits, amount_bits, low_bits) < bits)


def build_count(m, counter, amount, *, clear, when=None, low_bits=LOW_BITS, live=False):
    """Add ``amount`` to the saturating register ``counter`` at every ``sync`` edge.

    Parameters
    ----------
    m : Module
    counter : View of count_layout
        The register; it holds the count :func:`count_lag` cycles after the amount is taken.
    amount : Value or int
    clear : Value
        Zero the count (and its flag) at this edge instead; the amount of this cycle is lost.
        A count that lags takes its clear a cycle later too, so the values it showed before the
        clear remain readable for as long as those of a count that does not.
    when : Value or None
        Add only in cycles where this is high.
    low_bits : int
        Width of the low part (widened to the amount's).
    live : bool
        Adding amounts, show the low part as it adds, not a cycle late: a flip-flop per bit of
        it less, for a count that is read only once counting stopped (not copied by a
        snapshot while the design runs). ``counter`` is exact in every cycle that follows one
        without an amount; in a cycle after one, the low part's carry may still be on its way
        to the high part (``now`` has it).

    Returns
    -------
    now : Value of count_layout
        The count as a count that does not lag shows it: ``counter`` itself, or for a count that
        lags, its registers added up (an adder as wide as the high part, for the few readers
        that need it in the cycle, such as a sampler's records).
    invariant : Value
        A relation between the count's registers that holds in every state reachable from
        reset: a formal proof assumes less when it asserts it too (k-induction closes).
    """
    amount = Value.cast(amount)
    take = amount if len(amount) == 1 else Const(1)
    if when is not None:
        take = take & when
    bits = len(counter.count)
    low_width = _low_bits(bits, len(amount), low_bits)
    low, high = counter.count[:low_width], counter.count[low_width:]
    overflow, name = counter.overflow, counter.as_value().name
    ones = (1 << low_width) - 1
    if len(amount) == 1:
        # Counting one at a time: the low part wraps, and the count saturates, in cycles
        # flagged by registers set the cycle before. One of them says the whole count is all
        # ones, so whether an event adds or saturates is decided by a single register.
        low_full = Signal(name=f"{name}_low_full")
        high_full = Signal(name=f"{name}_high_full") if len(high) else Const(1)
        full = Signal(name=f"{name}_full")
        with m.If(clear):
            m.d.sync += [counter.as_value().eq(0), low_full.eq(0), full.eq(0)]
            if len(high):
                m.d.sync += high_full.eq(0)
        with m.Elif(take & ~full):
            # Only a low part one short of all ones becomes all ones without a carry.
            m.d.sync += [low.eq(low + 1), low_full.eq(low == ones - 1),
                         full.eq((low == ones - 1) & high_full)]
            if len(high):
                with m.If(low_full):
                    m.d.sync += [high.eq(high + 1), high_full.eq(high == (1 << len(high)) - 2)]
        with m.Elif(take):
            m.d.sync += overflow.eq(1)
        return counter, ((low_full == low.all()) & (high_full == high.all())
                         & (full == counter.count.all()) & (~overflow | full))
    if not len(high):
        # No wider than the amount: one adder, as wide as the count.
        with m.If(clear):
            m.d.sync += counter.as_value().eq(0)
        with m.Elif(take):
            m.d.sync += counter.as_value().eq(saturating_sum(counter, amount))
        return counter, ~overflow | counter.count.all()
    saturated = (1 << (bits + 1)) - 1
    if live:
        # The count's own low part adds; the high part takes its carry at the next edge, when
        # a carry into an all-ones high part saturates the count.
        carry, high_full = Signal(name=f"{name}_carry"), Signal(name=f"{name}_high_full")
        total = low + amount
        saturating = overflow | (carry & high_full)
        with m.If(clear):
            m.d.sync += [counter.as_value().eq(0), carry.eq(0), high_full.eq(0)]
        with m.Elif(saturating):
            m.d.sync += [low.eq(ones), overflow.eq(1), carry.eq(0)]
        with m.Else():
            m.d.sync += [high.eq(high + carry), carry.eq(0)]
            with m.If(carry):
                m.d.sync += high_full.eq(high == (1 << len(high)) - 2)
            with m.If(take):
                m.d.sync += [low.eq(total[:low_width]), carry.eq(total[low_width])]
        now = Mux(saturating, saturated, Cat(low, (high + carry)[:len(high)], 0))
        return counter.shape()(now), ((~overflow | counter.count.all()) & ~(overflow & carry)
                                      & (high_full == high.all()))
    # Adding amounts: the low part adds in a register of its own and is shown a cycle later,
    # beside the high part that has then taken the low part's carry. A clear empties the adder
    # at once and what is shown a cycle later.
    # Whether the high part is all ones is kept in a register too, set as the carry fills it.
    adding, carry = Signal(low_width, name=f"{name}_low"), Signal(name=f"{name}_carry")
    clearing = Signal(name=f"{name}_clear")
    high_full = Signal(name=f"{name}_high_full")
    total = adding + amount
    m.d.sync += [clearing.eq(clear), carry.eq(0)]
    with m.If(clear):
        m.d.sync += adding.eq(0)
    with m.Elif(take):
        m.d.sync += [adding.eq(total[:low_width]), carry.eq(total[low_width])]
    saturating = overflow | (carry & high_full)
    with m.If(clearing):
        m.d.sync += [counter.as_value().eq(0), high_full.eq(0)]
    with m.Elif(saturating):
        m.d.sync += [low.eq(ones), overflow.eq(1)]
    with m.Else():
        m.d.sync += [low.eq(adding), high.eq(high + carry)]
        with m.If(carry):
            m.d.sync += high_full.eq(high == (1 << len(high)) - 2)
    added = Cat(adding, (high + carry)[:len(high)], 0)
    now = Mux(clearing, adding, Mux(saturating, saturated, added))
    return counter.shape()(now), (~overflow | counter.count.all()) & (high_full == high.all())


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
