"""A ``SyncFIFO``'s "not full" and "not empty" as flip-flops, and a FIFO built on them.

``SyncFIFO`` derives ``w_rdy`` and ``r_rdy`` by comparing its level, so a handshake that starts
at them starts at a comparison and, across a system, at a long net. These flags are set a cycle
ahead from the level and this cycle's transfers instead, so they equal ``w_rdy`` and ``r_rdy``
in every cycle and a handshake starts at a register. :class:`FlaggedFIFO` is a ``SyncFIFO``
whose own ``w_rdy`` and ``r_rdy`` are such flip-flops.
"""

from amaranth.hdl import Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

__all__ = ["FlaggedFIFO", "registered_filled", "registered_room"]


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


class FlaggedFIFO(Elaboratable):
    """A first-in first-out queue with the interface and timing of Amaranth's ``SyncFIFO``
    (first-word fall-through, the same ``w_*``, ``r_*`` and ``level`` members), whose ``w_rdy``
    and ``r_rdy`` are flip-flops: a write and a read, and the level's enable, start at
    registers.

    Parameters
    ----------
    width : int
        Bits of an entry, at least 1.
    depth : int
        Entries, at least 2.
    """

    def __init__(self, *, width, depth):
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 2:
            raise ValueError(f"depth must be an integer of at least 2, not {depth!r}")
        self.width, self.depth = width, depth
        self.w_data = Signal(width)
        self.w_rdy = Signal(init=1)
        self.w_en = Signal()
        self.r_data = Signal(width)
        self.r_rdy = Signal()
        self.r_en = Signal()
        self.level = Signal(range(depth + 1))

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        do_write = self.w_rdy & self.w_en
        do_read = self.r_rdy & self.r_en

        # The flags of the level after this cycle's transfers.
        after = Signal(range(depth + 1))
        m.d.comb += after.eq(self.level + do_write - do_read)
        m.d.sync += [
            self.level.eq(after),
            self.w_rdy.eq(after != depth),
            self.r_rdy.eq(after != 0),
        ]

        # Distributed RAM where the family has it: a combinational read of the oldest entry.
        m.submodules.storage = storage = Memory(shape=self.width, depth=depth, init=[])
        w_port = storage.write_port()
        r_port = storage.read_port(domain="comb")
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        incr = lambda pointer: Mux(pointer == depth - 1, 0, pointer + 1)     # noqa: E731
        m.d.comb += [
            w_port.addr.eq(produce),
            w_port.data.eq(self.w_data),
            w_port.en.eq(do_write),
            r_port.addr.eq(consume),
            self.r_data.eq(r_port.data),
        ]
        with m.If(do_write):
            m.d.sync += produce.eq(incr(produce))
        with m.If(do_read):
            m.d.sync += consume.eq(incr(consume))
        return m
