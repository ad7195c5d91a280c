"""The ``none`` buffer strategy: every output fetches its whole window, nothing is reused.

Outputs are produced in groups of ``U`` neighbours along a row. For each active mask entry
``(i, j)`` the group fetches one beat of ``U`` contiguous pixels (lane ``u`` is the entry's pixel
for output ``u``) and folds it into ``U`` accumulators, so a group takes ``K`` beats and
reads = K * outputs. The last group of a row is partial and fetches only the lanes it needs.
"""

from amaranth.hdl import Const, Mux, Signal

from .pe import BeatFormat
from .walk import Loop

__all__ = ["DirectStrategy"]


class DirectStrategy:
    """Read and write walks and the datapath of an unbuffered window filter."""

    name = "none"

    def __init__(self, f):
        if f.unroll > f.out_width:
            raise ValueError(f"unroll must be at most the output width {f.out_width} without a "
                             f"buffer, not {f.unroll}")
        self.f = f
        self.groups = -(-f.out_width // f.unroll)
        self.last_group_lanes = f.out_width - (self.groups - 1) * f.unroll
        self.entries = [(int(i), int(j)) for i, j in zip(*f.mask.nonzero())]
        self.beats_per_step = len(self.entries)
        self.rd_beat = BeatFormat(f.unroll, 1, f.pixel_bits)
        self.wr_beat = BeatFormat(f.unroll, 1, f.pixel_bits)

    # -- fetch pattern ---------------------------------------------------------------------------

    def reads(self):
        return len(self.entries) * self.f.out_height * self.f.out_width

    def steps(self):
        return self.f.out_height * self.groups

    def writing_steps(self):
        return self.steps()

    def read_loops(self):
        f = self.f
        offsets = [i * f.width + j for i, j in self.entries]
        return [Loop(f.out_height, stride=f.width), Loop(self.groups, stride=f.unroll),
                Loop(len(offsets), offsets=offsets)], 0

    def _group_mask(self, walk):
        lanes = self.f.unroll
        partial = (1 << self.last_group_lanes) - 1
        return Mux(walk.last[1], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    read_mask = _group_mask
    write_mask = _group_mask

    def step_start(self, walk):
        return walk.first[2]

    def write_loops(self):
        f = self.f
        return [Loop(f.out_height, stride=f.out_width), Loop(self.groups, stride=f.unroll)], 0

    def latency(self):
        return 1

    # -- datapath --------------------------------------------------------------------------------

    def build(self, m, platform, restart, in_valid, in_data):
        f = self.f
        bits = f.pixel_bits
        entry = Signal(range(len(self.entries)))
        last_entry = Signal(init=len(self.entries) == 1)
        with m.If(restart):
            m.d.sync += [entry.eq(0), last_entry.eq(len(self.entries) == 1)]
        with m.Elif(in_valid):
            with m.If(last_entry):
                m.d.sync += [entry.eq(0), last_entry.eq(len(self.entries) == 1)]
            with m.Else():
                m.d.sync += [entry.eq(entry + 1), last_entry.eq(entry == len(self.entries) - 2)]

        acc = [Signal(bits, name=f"acc{u}") for u in range(f.unroll)]
        with m.If(in_valid):
            for u in range(f.unroll):
                pixel = in_data[u]
                m.d.sync += acc[u].eq(Mux(entry == 0, pixel, f.op.combine(acc[u], pixel)))
        out_valid = Signal()
        m.d.sync += out_valid.eq(in_valid & last_entry)
        return out_valid, Const(1), acc
