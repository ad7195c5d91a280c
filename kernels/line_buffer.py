"""The ``line`` buffer strategy: raster order, ``N - 1`` image rows kept in block RAM.

Beats of ``U`` pixels arrive along each row. A memory of ``W / U`` words, each holding the ``N - 1``
previous rows at that beat's columns, turns every beat into ``U`` complete window columns (a
read-modify-write per beat: read the old rows, write back the new beat above them). Every input
pixel is read from off-chip memory exactly once: reads = H * W.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib.memory import Memory

from .ecp5_ram import OutputRegisteredRAM
from .walk import Loop
from .window_buffer import WindowBuffer

__all__ = ["LineBuffer"]


class LineBuffer(WindowBuffer):
    """The datapath of a line-buffered window filter.

    A step is one beat: ``U`` pixels along a row, in raster order. With the ``N - 1`` rows above
    them, read from the line buffer, they are ``U`` new window columns; the registers hold the
    reductions of the last ``M - 1`` columns (:mod:`~hwgen.kernels.separable`). A beat completes
    windows once ``N`` rows and ``M`` columns of its row are in (its lane ``u`` is then the
    window whose right column is the beat's lane ``u``); the other steps are ``skipped``. On
    ECP5 (a platform whose ``family`` is ``"ecp5"``) the line buffer is built from DP16KD tiles
    with their output register (:mod:`~hwgen.kernels.ecp5_ram`) and a register after them.

    Parameters and members: see :class:`~hwgen.kernels.window_buffer.WindowBuffer`. ``unroll``
    divides the image width.
    """

    name = "line"
    beats_per_step = 1

    def _check_unroll(self):
        if self.width % self.unroll:
            raise ValueError(f"unroll must divide the image width {self.width} for the line "
                             f"buffer, not {self.unroll}")

    @property
    def beats_per_row(self):
        return self.width // self.unroll

    @property
    def first_beat(self):
        """The first beat of a row whose last lane completes a window."""
        return max(0, -(-(self.cols - self.unroll) // self.unroll))

    # -- fetch pattern ---------------------------------------------------------------------------

    @property
    def reads(self):
        return self.height * self.width

    @property
    def steps(self):
        return self.height * self.beats_per_row

    @property
    def writing_steps(self):
        return self.out_height * (self.beats_per_row - self.first_beat)

    def read_loops(self):
        return [Loop(self.steps, stride=self.unroll)], 0

    def write_loops(self):
        beats = self.beats_per_row - self.first_beat
        offset = self.first_beat * self.unroll - (self.cols - 1)
        return [Loop(self.out_height, stride=self.out_width),
                Loop(beats, stride=self.unroll)], offset

    def step_start(self, walk):
        return Const(1)

    def read_mask(self, walk):
        return Const((1 << self.unroll) - 1, self.unroll)

    def write_mask(self, walk):
        lane0_x = self.first_beat * self.unroll - (self.cols - 1)
        first = sum(1 << u for u in range(self.unroll) if lane0_x + u >= 0)
        full = (1 << self.unroll) - 1
        return Mux(walk.first[1], Const(first, self.unroll), Const(full, self.unroll))

    # -- hardware --------------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        n, u_lanes, bits = self.rows, self.unroll, self.pixel_bits
        in_valid = self.pixels.valid

        # Position of the beat arriving now: column beat, and whether its row and columns
        # complete any window. Whether it is the row's last beat, or the one before the first
        # beat that completes windows, are flip-flops set with the column: an arrival (in a
        # system, a register of the interconnect) reaches the counters' enables through one LUT.
        beats = self.beats_per_row
        col = Signal(range(beats))
        col_next = Signal.like(col)
        last_col = Signal(init=beats == 1)
        before_first = Signal(init=self.first_beat == 1)
        rows_seen = Signal(range(n))
        row_ok = Signal(init=n == 1)
        col_ok = Signal(init=self.first_beat == 0)
        rewind = self.restart | last_col
        m.d.comb += col_next.eq(Mux(rewind, 0, col + 1))
        with m.If(self.restart | in_valid):
            # The flags compare the column before the adder with constants: the count's carry
            # chain is not in front of them.
            m.d.sync += [col.eq(col_next),
                         last_col.eq(Mux(rewind, beats == 1, col == beats - 2)),
                         before_first.eq(Mux(rewind, self.first_beat == 1,
                                             col == self.first_beat - 2))]
        with m.If(self.restart):
            m.d.sync += [rows_seen.eq(0), row_ok.eq(n == 1), col_ok.eq(self.first_beat == 0)]
        with m.Elif(in_valid):
            with m.If(last_col):
                m.d.sync += col_ok.eq(self.first_beat == 0)
                if n > 1:
                    with m.If(rows_seen != n - 1):
                        m.d.sync += rows_seen.eq(rows_seen + 1)
                    with m.If(rows_seen >= n - 2):
                        m.d.sync += row_ok.eq(1)
            if self.first_beat:
                with m.Elif(before_first):
                    m.d.sync += col_ok.eq(1)
        beat = self.pixels.payload.as_value()
        lanes = [beat[u * bits:(u + 1) * bits] for u in range(u_lanes)]
        if n == 1:
            columns = [[[lane] for lane in lanes]]
        else:
            stored = self._rows_above(m, platform, beat)
            columns = [[[stored[(slot * u_lanes + u) * bits:(slot * u_lanes + u + 1) * bits]
                         for slot in reversed(range(n - 1))] + [lanes[u]]
                        for u in range(u_lanes)]]
        self._reduce(m, columns, [(0, u) for u in range(u_lanes)], row_ok & col_ok)
        return m

    def _rows_above(self, m, platform, beat):
        """The N-1 rows above the arriving beat, ready in the cycle it arrives.

        Word layout: slot 0 is the row just above, slot N-2 the oldest. Each arrival writes its
        word back shifted down by one row, with the beat in slot 0, and the word a beat needs is
        read ahead, at an arrival (one arrival ahead; on ECP5 three: the block RAM's output
        register and a register after it add two), so the read latency is hidden. The words form
        a ring that advances one word per arrival and never restarts: a frame's column ``c`` of
        row ``r`` is the word its row ``r - 1`` wrote ``W/U`` arrivals earlier wherever the frame
        began, and what the first row reads is rows the row count keeps from completing a window. So
        the memory's addresses are registers and its enable is the arrival, never ``restart``
        (in a system, ``start`` comes from a register far away). A word is written ``W/U``
        arrivals before it is needed, more than the read-ahead distance, so the read never races
        the write.
        """
        in_valid = self.pixels.valid
        beats = self.beats_per_row
        row_bits = self.unroll * self.pixel_bits
        width = (self.rows - 1) * row_bits
        shifted = lambda word: Cat(beat, word[:(self.rows - 2) * row_bits])
        if beats == 1:
            word = Signal(width, name="line_word")
            with m.If(in_valid):
                m.d.sync += word.eq(shifted(word))
            return word

        wrap = lambda addr: Mux(addr == beats - 1, 0, addr + 1)
        here = Signal(range(beats), name="line_addr")
        with m.If(in_valid):
            m.d.sync += here.eq(wrap(here))

        if getattr(platform, "family", None) == "ecp5" and 4 <= beats <= 16384:
            m.submodules.line_buf = line_buf = OutputRegisteredRAM(width, beats)
            # Three reads are in flight: the block's two registers, then one in the fabric next
            # to the comparators (the block's output is far from them in a full device). Each
            # arrival reads the word three arrivals ahead.
            ahead = Signal(range(beats), init=3, name="line_ahead")
            stored = Signal(width, name="line_rows")
            with m.If(in_valid):
                m.d.sync += [ahead.eq(wrap(ahead)), stored.eq(line_buf.rd_data)]
            m.d.comb += [
                line_buf.rd_addr.eq(ahead),
                line_buf.rd_en.eq(in_valid),
                line_buf.wr_addr.eq(here),
                line_buf.wr_en.eq(in_valid),
                line_buf.wr_data.eq(shifted(stored)),
            ]
            return stored

        m.submodules.line_buf = line_buf = Memory(shape=width, depth=beats, init=[])
        wr = line_buf.write_port()
        rd = line_buf.read_port()
        m.d.comb += [
            rd.addr.eq(wrap(here)),
            rd.en.eq(in_valid),
            wr.addr.eq(here),
            wr.en.eq(in_valid),
            wr.data.eq(shifted(rd.data)),
        ]
        return rd.data
