"""The ``none`` buffer strategy: every output fetches its whole window, nothing is reused.

Outputs are produced in groups of ``U`` neighbours along a row. For each active mask entry
``(i, j)`` the group fetches one beat of ``U`` contiguous pixels (lane ``u`` is the entry's pixel
for output ``u``) and folds it into ``U`` accumulators, so a group takes ``K`` beats and
reads = K * outputs. The last group of a row is partial and fetches only the lanes it needs.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal

from .walk import Loop
from .window_buffer import WindowBuffer

__all__ = ["Unbuffered"]


class Unbuffered(WindowBuffer):
    """The datapath of an unbuffered window filter: ``U`` accumulators.

    A step is one group of ``U`` outputs: ``K`` beats, the active mask entries in row-major
    order, each folded into the accumulators as it arrives; the results leave one cycle after
    the last. Every step completes its windows, so ``skipped`` stays low. The reduction is a
    chain, not a tree: ``tree_stages`` must be 0.

    Parameters and members: see :class:`~hwgen.kernels.window_buffer.WindowBuffer`. ``unroll``
    is at most the output width ``W - M + 1``.
    """

    name = "none"

    def _check_unroll(self):
        if self.unroll > self.out_width:
            raise ValueError(f"unroll must be at most the output width {self.out_width} "
                             f"without a buffer, not {self.unroll}")

    @classmethod
    def tree_levels_of(cls, mask):
        return 0

    @property
    def entries(self):
        """The active mask entries ``(i, j)``, in the order a step fetches them."""
        return [(int(i), int(j)) for i, j in zip(*self.mask.nonzero())]

    @property
    def groups(self):
        """Groups of ``U`` outputs per output row; the last may be partial."""
        return -(-self.out_width // self.unroll)

    @property
    def last_group_lanes(self):
        return self.out_width - (self.groups - 1) * self.unroll

    # -- fetch pattern ---------------------------------------------------------------------------

    @property
    def beats_per_step(self):
        return len(self.entries)

    @property
    def latency(self):
        return 1

    @property
    def reads(self):
        return len(self.entries) * self.out_height * self.out_width

    @property
    def steps(self):
        return self.out_height * self.groups

    @property
    def writing_steps(self):
        return self.steps

    def read_loops(self):
        offsets = [i * self.width + j for i, j in self.entries]
        return [Loop(self.out_height, stride=self.width), Loop(self.groups, stride=self.unroll),
                Loop(len(offsets), offsets=offsets)], 0

    def write_loops(self):
        return [Loop(self.out_height, stride=self.out_width),
                Loop(self.groups, stride=self.unroll)], 0

    def step_start(self, walk):
        return walk.first[2]

    def _group_mask(self, walk):
        lanes = self.unroll
        partial = (1 << self.last_group_lanes) - 1
        return Mux(walk.last[1], Const(partial, lanes), Const((1 << lanes) - 1, lanes))

    read_mask = _group_mask
    write_mask = _group_mask

    # -- hardware --------------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        k = len(self.entries)
        valid = self.pixels.valid

        # The entry the arriving beat holds.
        entry = Signal(range(k))
        last_entry = Signal(init=k == 1)
        with m.If(self.restart):
            m.d.sync += [entry.eq(0), last_entry.eq(k == 1)]
        with m.Elif(valid):
            with m.If(last_entry):
                m.d.sync += [entry.eq(0), last_entry.eq(k == 1)]
            with m.Else():
                m.d.sync += [entry.eq(entry + 1), last_entry.eq(entry == k - 2)]

        acc = [Signal(self.pixel_bits, name=f"acc{u}") for u in range(self.unroll)]
        with m.If(valid):
            for u in range(self.unroll):
                pixel = self.pixels.payload[u]
                m.d.sync += acc[u].eq(Mux(entry == 0, pixel, self.op.combine(acc[u], pixel)))
        m.d.sync += self.results.valid.eq(valid & last_entry)
        m.d.comb += self.results.payload.eq(Cat(acc))
        return m
