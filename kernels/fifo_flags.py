"""A ``SyncFIFO``'s "not full" and "not empty" as flip-flops.

``SyncFIFO`` derives ``w_rdy`` and ``r_rdy`` by comparing its level, so a handshake that starts
at them starts at a comparison and, across a system, at a long net. These flags are set a cycle
ahead from the level and this cycle's transfers instead, so they equal ``w_rdy`` and ``r_rdy``
in every cycle and a handshake starts at a register.
"""

from amaranth.hdl import Signal

__all__ = ["registered_filled", "registered_room"]


def registered_room(m, name, fifo):
    """``fifo``'s "not full" (its ``w_rdy``) as a flip-flop. The caller raises ``w_en`` only with
    it (``r_en`` may be high while the FIFO is empty)."""
    room = Signal(name=f"{name}_room", init=1)
    level, depth = fifo.level, fifo.depth
    m.d.sync += room.eq(fifo.r_en | (level < depth - 1) | ((level == depth - 1) & ~fifo.w_en))
    return room


def registered_filled(m, name, fifo):
    """``fifo``'s "not empty" (its ``r_rdy``) as a flip-flop. The caller raises ``w_en`` only
    with ``w_rdy`` (``r_en`` may be high while the FIFO is empty)."""
    filled = Signal(name=f"{name}_filled")
    level = fifo.level
    m.d.sync += filled.eq(fifo.w_en | (level > 1) | ((level == 1) & ~fifo.r_en))
    return filled
