"""The ``line`` buffer strategy: raster order, ``N - 1`` image rows kept in block RAM.

Beats of ``U`` pixels arrive along each row. A memory of ``W / U`` words, each holding the ``N - 1``
previous rows at that beat's columns, turns every beat into ``U`` complete window columns (a
read-modify-write per beat: read the old rows, write back the new beat above them). Every input
pixel is read from off-chip memory exactly once: reads = H * W.
"""

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib.memory import Memory

from .pe import BeatFormat
from .separable import delay, separable_reduce
from .walk import Loop

__all__ = ["LineBufferStrategy"]


class LineBufferStrategy:
    """Read and write walks and the datapath of a line-buffered window filter."""

    name = "line"
    beats_per_step = 1

    def __init__(self, f):
        if f.width % f.unroll:
            raise ValueError(f"unroll must divide the image width {f.width} for the line buffer, "
                             f"not {f.unroll}")
        self.f = f
        self.beats_per_row = f.width // f.unroll
        # First beat of a row whose last lane completes a window.
        self.first_beat = max(0, -(-(f.cols - f.unroll) // f.unroll))
        self.rd_beat = BeatFormat(f.unroll, 1, f.pixel_bits)
        self.wr_beat = BeatFormat(f.unroll, 1, f.pixel_bits)
        # A registered block-RAM read needs the next visit to a column 3 beats later or more.
        self.read_latency = 2 if f.pipeline and self.beats_per_row >= 3 else 1

    # -- fetch pattern ---------------------------------------------------------------------------

    def reads(self):
        return self.f.height * self.f.width

    def steps(self):
        return self.f.height * self.beats_per_row

    def writing_steps(self):
        return self.f.out_height * (self.beats_per_row - self.first_beat)

    def read_loops(self):
        return [Loop(self.steps(), stride=self.f.unroll)], 0

    def read_mask(self, walk):
        return Const((1 << self.f.unroll) - 1, self.f.unroll)

    def step_start(self, walk):
        return Const(1)

    def write_loops(self):
        f = self.f
        beats = self.beats_per_row - self.first_beat
        offset = self.first_beat * f.unroll - (f.cols - 1)
        return [Loop(f.out_height, stride=f.out_width), Loop(beats, stride=f.unroll)], offset

    def write_mask(self, walk):
        f = self.f
        lane0_x = self.first_beat * f.unroll - (f.cols - 1)
        first = sum(1 << u for u in range(f.unroll) if lane0_x + u >= 0)
        full = (1 << f.unroll) - 1
        return Mux(walk.first[1], Const(first, f.unroll), Const(full, f.unroll))

    def latency(self):
        return self.read_latency + sum(self.f.tree_registers)

    # -- datapath --------------------------------------------------------------------------------

    def build(self, m, restart, in_valid, in_data):
        f = self.f
        n, u_lanes, bits = f.rows, f.unroll, f.pixel_bits

        # Position of the beat arriving now: column beat, and whether its row and columns
        # complete any window.
        col = Signal(range(self.beats_per_row))
        rows_seen = Signal(range(n))
        row_ok = Signal(init=n == 1)
        col_ok = Signal(init=self.first_beat == 0)
        with m.If(restart):
            m.d.sync += [col.eq(0), rows_seen.eq(0), row_ok.eq(n == 1), col_ok.eq(self.first_beat == 0)]
        with m.Elif(in_valid):
            with m.If(col == self.beats_per_row - 1):
                m.d.sync += [col.eq(0), col_ok.eq(self.first_beat == 0)]
                with m.If(rows_seen != n - 1):
                    m.d.sync += rows_seen.eq(rows_seen + 1)
                with m.If(rows_seen >= n - 2):
                    m.d.sync += row_ok.eq(1)
            with m.Else():
                m.d.sync += col.eq(col + 1)
                if self.first_beat:
                    with m.If(col + 1 == self.first_beat):
                        m.d.sync += col_ok.eq(1)
        emit = row_ok & col_ok

        lat = self.read_latency
        valid_d = delay(m, in_valid, lat, name="beat_valid")
        emit_d = delay(m, emit, lat, name="beat_emit")
        beat_d = delay(m, in_data.as_value(), lat, name="beat")
        lanes = [beat_d[u * bits:(u + 1) * bits] for u in range(u_lanes)]

        if n == 1:
            columns = [[[lane] for lane in lanes]]
        else:
            row_bits = u_lanes * bits
            m.submodules.line_buf = line_buf = Memory(shape=(n - 1) * row_bits,
                                                      depth=self.beats_per_row, init=[])
            wr = line_buf.write_port()
            rd = line_buf.read_port(transparent_for=(wr,) if self.beats_per_row == 1 else ())
            m.d.comb += [rd.addr.eq(col), rd.en.eq(in_valid)]
            stored = delay(m, rd.data, lat - 1, name="line_buf_q")
            # Word layout: slot 0 is the row just above the new beat, slot N-2 the oldest.
            m.d.comb += [
                wr.addr.eq(delay(m, col, lat, name="line_buf_col")),
                wr.en.eq(valid_d),
                wr.data.eq(Cat(beat_d, stored[:(n - 2) * row_bits])),
            ]
            columns = [[[stored[(slot * u_lanes + u) * bits:(slot * u_lanes + u + 1) * bits]
                         for slot in reversed(range(n - 1))] + [lanes[u]]
                        for u in range(u_lanes)]]

        vregs, hregs = f.tree_registers_split
        outputs, depth = separable_reduce(
            m, f.op, f.column_patterns, columns, [(0, u) for u in range(u_lanes)], valid_d,
            vertical_regs=vregs, horizontal_regs=hregs, name="win")
        return (delay(m, valid_d, depth, name="out_valid"),
                delay(m, emit_d, depth, name="out_emit"),
                outputs)
