"""A first-word fall-through FIFO in block RAM, for families without LUT RAM.

:class:`~hwgen.kernels.fifo_flags.FlaggedFIFO` reads its oldest entry combinationally: distributed
RAM where the family has it, but on the iCE40, which has none, flip-flops and a multiplexer per
bit over every entry. :class:`BlockFIFO` has the same interface, flags and timing, and keeps its
entries in a memory with a synchronous read, which Yosys maps to block RAM (the iCE40's EBR):
the read port is addressed with the entry that will be the oldest in the next cycle (the read
pointer after this cycle's read) and is transparent to the write port, so an entry written
into an empty FIFO is at the head the cycle after, as in ``FlaggedFIFO``.
"""

from amaranth.hdl import Mux, Signal

from .fifo_flags import FlaggedFIFO, _advance

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
    credited : bool
        The writer never writes into a full FIFO (see ``FlaggedFIFO``).
    """

    def _read_port(self, m, storage, w_port, do_read):
        # Read a cycle ahead: the entry that is the oldest after this cycle's read, transparent
        # to this cycle's write so that an entry written into an empty FIFO is at the head next.
        r_port = storage.read_port(transparent_for=(w_port,))
        consume = Signal(range(self.depth))
        consume_next = Signal(range(self.depth))
        m.d.comb += [
            consume_next.eq(Mux(do_read, _advance(consume, self.depth), consume)),
            r_port.addr.eq(consume_next),
        ]
        m.d.sync += consume.eq(consume_next)
        return r_port
