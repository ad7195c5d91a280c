"""A two-entry first-in first-out buffer in flip-flops: every output a register.

A two-entry :class:`~hwgen.kernels.fifo_flags.FlaggedFIFO` keeps its entries in a memory read
combinationally, LUT RAM on the ECP5: its head is a read pointer through the RAM's read
multiplexer, so a payload leaving it starts at a register and a RAM. :class:`SkidBuffer` keeps
them in two registers instead: the head, which is the output, and a skid register behind it
that takes the beat offered in a cycle the head stalls. Its ``r_data``, ``r_rdy`` and ``w_rdy``
are flip-flops; a write enable only reaches the two "holds a beat" flags, not the payload
registers' enables; a beat written in one cycle is at the head in the next, and one beat per
cycle goes through.
"""

from amaranth.hdl import Elaboratable, Module, Mux, Signal

__all__ = ["SkidBuffer"]


class SkidBuffer(Elaboratable):
    """A two-entry first-in first-out buffer with the interface and timing of Amaranth's
    ``SyncFIFO`` of depth 2 (first-word fall-through, the same ``w_*``, ``r_*`` and ``level``
    members) whose ``r_data``, ``r_rdy`` and ``w_rdy`` are flip-flops.

    Parameters
    ----------
    width : int
        Bits of an entry, at least 1.

    Members
    -------
    r_rdy_next : Signal
        The value ``r_rdy`` takes at the next clock edge (whether the buffer will hold a beat),
        from this cycle's flags and enables: a reader can decide a cycle ahead, into a
        register, what it will take from the buffer.
    w_rdy_next : Signal
        The value ``w_rdy`` takes at the next clock edge (whether the skid register will be
        empty), from this cycle's flags and enables.
    """

    depth = 2

    def __init__(self, *, width):
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        self.width = width
        self.w_data = Signal(width)
        self.w_rdy = Signal(init=1)
        self.w_en = Signal()
        self.r_data = Signal(width)
        self.r_rdy = Signal()
        self.r_en = Signal()
        self.level = Signal(range(self.depth + 1))
        self.r_rdy_next = Signal()
        self.w_rdy_next = Signal()

    def elaborate(self, platform):
        m = Module()
        skid = Signal(self.width)
        write = self.w_en & self.w_rdy
        # The head moves on when it is read or empty: it takes the skid's beat, else the one
        # written now (don't-care data when there is none: only the flags say what it holds).
        advance = self.r_en | ~self.r_rdy
        with m.If(advance):
            m.d.sync += self.r_data.eq(Mux(self.w_rdy, self.w_data, skid))
        m.d.comb += self.r_rdy_next.eq(Mux(advance, ~self.w_rdy | write, self.r_rdy))
        m.d.sync += self.r_rdy.eq(self.r_rdy_next)
        # The skid holds a beat written while the head stays. It is empty exactly when there is
        # room (``w_rdy``); it loads whenever it is empty, so its enable is that flip-flop, and
        # only the flag says whether it took a beat.
        with m.If(self.w_rdy):
            m.d.sync += skid.eq(self.w_data)
        m.d.comb += self.w_rdy_next.eq(advance | (self.w_rdy & ~write))
        m.d.sync += self.w_rdy.eq(self.w_rdy_next)
        m.d.comb += self.level.eq(self.r_rdy + ~self.w_rdy)
        return m
