"""A first-word fall-through FIFO in block RAM, for families without LUT RAM.

:class:`~hwgen.kernels.fifo_flags.FlaggedFIFO` reads its oldest entry combinationally: distributed
RAM where the family has it, but on the iCE40, which has none, flip-flops and a multiplexer per
bit over every entry. :class:`BlockFIFO` has the same interface, flags and timing, and keeps its
entries in a memory with a synchronous read, which Yosys maps to block RAM (the iCE40's EBR):
the read port is addressed with the entry that will be the oldest in the next cycle (the read
pointer after this cycle's read) and is transparent to the write port, so an entry written
into an empty FIFO is at the head the cycle after, as in ``FlaggedFIFO``.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.memory import Memory

from .fifo_flags import FlaggedFIFO, _filled_after, _room_after

__all__ = ["BlockFIFO"]


class BlockFIFO(FlaggedFIFO):
    """A :class:`~hwgen.kernels.fifo_flags.FlaggedFIFO` (its interface, its flip-flop flags, its
    first-word fall-through timing) whose entries are in block RAM, read one cycle ahead.

    Parameters
    ----------
    width : int
        Bits of an entry, at least 1.
    depth : int
        Entries, at least 2.
    """

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        do_write = self.w_rdy & self.w_en
        do_read = self.r_rdy & self.r_en
        m.d.sync += [
            self.level.eq(self.level + do_write - do_read),
            self.w_rdy.eq(_room_after(self.level, depth, do_write, do_read)),
            self.r_rdy.eq(_filled_after(self.level, do_write, do_read)),
        ]

        m.submodules.storage = storage = Memory(shape=self.width, depth=depth, init=[])
        w_port = storage.write_port()
        r_port = storage.read_port(transparent_for=(w_port,))
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        consume_next = Signal(range(depth))
        incr = lambda pointer: Mux(pointer == depth - 1, 0, pointer + 1)     # noqa: E731
        m.d.comb += [
            consume_next.eq(Mux(do_read, incr(consume), consume)),
            w_port.addr.eq(produce),
            w_port.data.eq(self.w_data),
            w_port.en.eq(do_write),
            r_port.addr.eq(consume_next),
            self.r_data.eq(r_port.data),
        ]
        with m.If(do_write):
            m.d.sync += produce.eq(incr(produce))
        m.d.sync += consume.eq(consume_next)
        return m
