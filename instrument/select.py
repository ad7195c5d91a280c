"""Choosing one of several values by an index, as a tree of two-way multiplexers.

Yosys maps Amaranth's ``Array`` indexing and ``word_select`` with a variable index to a
parallel case or a shifter across every input bit; on the ECP5 that took some 8 LUTs per bit
to pick one of 5 or 8 words (the readout's blocks, a bank's low parts). A tree of two-way
multiplexers, one level per index bit, takes a LUT per bit for up to four values and four LUTs
with the slice's wide multiplexers for eight.
"""

from amaranth.hdl import Mux, Value

__all__ = ["select"]


def select(values, index):
    """``values[index]`` as a tree of :class:`~amaranth.hdl.Mux`, one level per bit of
    ``index`` from the lowest; an index past the last value gives one of the values (no
    reader of it may rely on which)."""
    level = [Value.cast(value) for value in values]
    if not level:
        raise ValueError("select needs at least one value")
    index = Value.cast(index)
    for bit in range(len(index)):
        if len(level) == 1:
            break
        level = [Mux(index[bit], pair[1], pair[0]) if len(pair) == 2 else pair[0]
                 for pair in (level[k:k + 2] for k in range(0, len(level), 2))]
    return level[0]
