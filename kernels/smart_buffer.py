"""The ``smart`` buffer strategy (ROCCC's smart buffer): register reuse along horizontal strips.

The image is processed in strips of ``U`` output rows. Each strip slides along the columns; a
step fetches one column of ``N + U - 1`` pixels (one beat, lanes ``W`` apart) and, once the first
``M - 1`` columns of the strip are in, yields ``U`` outputs, one per strip row. Only the last
strip can be partial; it fetches only the rows it needs. With ``S = ceil((H - N + 1) / U)``
strips and ``u_s`` output rows in strip ``s``: reads = sum over s of ``W * (N + u_s - 1)``.
"""

from amaranth.hdl import Const, Mux, Signal

from .pe import BeatFormat
from .separable import delay, separable_reduce
from .walk import Loop

__all__ = ["SmartBufferStrategy"]


class SmartBufferStrategy:
    """Read and write walks and the datapath of a smart-buffered window filter."""

    name = "smart"
    beats_per_step = 1

    def __init__(self, f):
        if f.unroll > f.out_height:
            raise ValueError(f"unroll must be at most the output height {f.out_height} for the "
                             f"smart buffer, not {f.unroll}")
        self.f = f
        self.strips = -(-f.out_height // f.unroll)
        self.last_strip_rows = f.out_height - (self.strips - 1) * f.unroll
        self.rd_beat = BeatFormat(f.rows + f.unroll - 1, f.width, f.pixel_bits)
        self.wr_beat = BeatFormat(f.unroll, f.out_width, f.pixel_bits)

    def strip_rows(self):
        """Output rows of each strip."""
        return [self.f.unroll] * (self.strips - 1) + [self.last_strip_rows]

    # -- fetch pattern ---------------------------------------------------------------------------

    def reads(self):
        f = self.f
        return sum(f.width * (f.rows + u - 1) for u in self.strip_rows())

    def steps(self):
        return self.strips * self.f.width

    def writing_steps(self):
        return self.strips * self.f.out_width

    def read_loops(self):
        f = self.f
        return [Loop(self.strips, stride=f.unroll * f.width), Loop(f.width, stride=1)], 0

    def read_mask(self, walk):
        lanes = self.rd_beat.lanes
        partial = (1 << (self.f.rows + self.last_strip_rows - 1)) - 1
        return Mux(walk.last[0], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    def step_start(self, walk):
        return Const(1)

    def write_loops(self):
        f = self.f
        return [Loop(self.strips, stride=f.unroll * f.out_width), Loop(f.out_width, stride=1)], 0

    def write_mask(self, walk):
        lanes = self.f.unroll
        partial = (1 << self.last_strip_rows) - 1
        return Mux(walk.last[0], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    def latency(self):
        return len(self.f.tree_registers)

    # -- datapath --------------------------------------------------------------------------------

    def build(self, m, platform, restart, in_valid, in_data):
        f = self.f
        bits = f.pixel_bits

        # Column within the strip of the beat arriving now; outputs start at column M - 1.
        x = Signal(range(f.width))
        col_ok = Signal(init=f.cols == 1)
        with m.If(restart):
            m.d.sync += [x.eq(0), col_ok.eq(f.cols == 1)]
        with m.Elif(in_valid):
            with m.If(x == f.width - 1):
                m.d.sync += [x.eq(0), col_ok.eq(f.cols == 1)]
            with m.Else():
                m.d.sync += x.eq(x + 1)
                if f.cols > 1:
                    with m.If(x + 1 == f.cols - 1):
                        m.d.sync += col_ok.eq(1)

        valid, emit, beat = in_valid, col_ok, in_data.as_value()
        pixels = [beat[i * bits:(i + 1) * bits] for i in range(self.rd_beat.lanes)]

        # One sequence of columns per output row of the strip, one new column per beat.
        columns = [[pixels[u:u + f.rows]] for u in range(f.unroll)]
        vregs, hregs = f.tree_registers_split
        outputs, depth = separable_reduce(
            m, f.op, f.column_patterns, columns, [(u, 0) for u in range(f.unroll)], valid,
            vertical_regs=vregs, horizontal_regs=hregs, name="win")
        return (delay(m, valid, depth, name="out_valid"),
                delay(m, emit, depth, name="out_emit"),
                outputs)
