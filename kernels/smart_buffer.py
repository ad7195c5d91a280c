"""The ``smart`` buffer strategy (ROCCC's smart buffer): register reuse along horizontal strips.

The image is processed in strips of ``U`` output rows. Each strip slides along the columns; a
step fetches one column of ``N + U - 1`` pixels (one beat, lanes ``W`` apart) and, once the first
``M - 1`` columns of the strip are in, yields ``U`` outputs, one per strip row. Only the last
strip can be partial; it fetches only the rows it needs. With ``S = ceil((H - N + 1) / U)``
strips and ``u_s`` output rows in strip ``s``: reads = sum over s of ``W * (N + u_s - 1)``.
"""

from amaranth.hdl import Const, Module, Mux, Signal

from .pe import BeatFormat
from .walk import Loop
from .window_buffer import WindowBuffer

__all__ = ["SmartBuffer"]


class SmartBuffer(WindowBuffer):
    """The datapath of a smart-buffered window filter.

    A step is one beat: a column of ``N + U - 1`` pixels of the strip, top first, which gives
    each of the strip's ``U`` output rows (lane ``u``, rows ``u`` to ``u + N - 1`` of the
    column) a new window column. The registers hold the reductions of the last ``M - 1``
    columns of each output row (:mod:`~hwgen.kernels.separable`); from the strip's ``M``-th
    column on every step completes ``U`` windows, its first ``M - 1`` steps are ``skipped``.

    Parameters and members: see :class:`~hwgen.kernels.window_buffer.WindowBuffer`. ``unroll``
    is at most the output height ``H - N + 1``.
    """

    name = "smart"
    beats_per_step = 1

    def _check_unroll(self):
        if self.unroll > self.out_height:
            raise ValueError(f"unroll must be at most the output height {self.out_height} for "
                             f"the smart buffer, not {self.unroll}")

    @property
    def strips(self):
        return -(-self.out_height // self.unroll)

    @property
    def last_strip_rows(self):
        return self.out_height - (self.strips - 1) * self.unroll

    def strip_rows(self):
        """Output rows of each strip."""
        return [self.unroll] * (self.strips - 1) + [self.last_strip_rows]

    # -- fetch pattern ---------------------------------------------------------------------------

    @property
    def rd_beat(self):
        return BeatFormat(self.rows + self.unroll - 1, self.width, self.pixel_bits)

    @property
    def wr_beat(self):
        return BeatFormat(self.unroll, self.out_width, self.pixel_bits)

    @property
    def reads(self):
        return sum(self.width * (self.rows + u - 1) for u in self.strip_rows())

    @property
    def steps(self):
        return self.strips * self.width

    @property
    def writing_steps(self):
        return self.strips * self.out_width

    def read_loops(self):
        return [Loop(self.strips, stride=self.unroll * self.width), Loop(self.width, stride=1)], 0

    def write_loops(self):
        return [Loop(self.strips, stride=self.unroll * self.out_width),
                Loop(self.out_width, stride=1)], 0

    def step_start(self, walk):
        return Const(1)

    def read_mask(self, walk):
        lanes = self.rd_beat.lanes
        partial = (1 << (self.rows + self.last_strip_rows - 1)) - 1
        return Mux(walk.last[0], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    def write_mask(self, walk):
        lanes = self.unroll
        partial = (1 << self.last_strip_rows) - 1
        return Mux(walk.last[0], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    # -- hardware --------------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        width, cols, bits = self.width, self.cols, self.pixel_bits

        # Column within the strip of the beat arriving now; outputs start at column M - 1.
        x = Signal(range(width))
        col_ok = Signal(init=cols == 1)
        with m.If(self.restart):
            m.d.sync += [x.eq(0), col_ok.eq(cols == 1)]
        with m.Elif(self.pixels.valid):
            with m.If(x == width - 1):
                m.d.sync += [x.eq(0), col_ok.eq(cols == 1)]
            with m.Else():
                m.d.sync += x.eq(x + 1)
                if cols > 1:
                    with m.If(x + 1 == cols - 1):
                        m.d.sync += col_ok.eq(1)

        beat = self.pixels.payload.as_value()
        pixels = [beat[i * bits:(i + 1) * bits] for i in range(self.rd_beat.lanes)]
        # One sequence of columns per output row of the strip, one new column per beat.
        columns = [[pixels[u:u + self.rows]] for u in range(self.unroll)]
        self._reduce(m, columns, [(u, 0) for u in range(self.unroll)], col_ok)
        return m
