"""Address generator for nested loops: the affine walks kernels make through memory."""

from amaranth.hdl import Array, Const, Module, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Loop", "AffineWalk"]


class Loop:
    """One level of a loop nest.

    Parameters
    ----------
    count : int
        Iterations, at least 1.
    stride : int
        Address step between iterations (may be negative). Exclusive with ``offsets``.
    offsets : tuple of int
        Address offset of each iteration, for irregular inner loops (for example the active
        entries of a structuring element). Exclusive with ``stride``.
    """
    def __init__(self, count, stride=None, *, offsets=None):
        if offsets is not None:
            if stride is not None:
                raise ValueError("give either stride or offsets, not both")
            offsets = tuple(int(o) for o in offsets)
            if count != len(offsets):
                raise ValueError(f"count {count} must equal the number of offsets {len(offsets)}")
        elif stride is None:
            raise ValueError("a loop needs a stride or offsets")
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"loop count must be a positive integer, not {count!r}")
        self.count = count
        # A strided loop keeps its offsets as a range: walks of a whole frame have millions.
        if offsets is None:
            offsets = range(0, count * stride, stride) if stride else (0,) * count
        self.offsets = offsets

    @property
    def steps(self):
        """The distinct address steps between consecutive iterations."""
        if isinstance(self.offsets, range):
            return {self.offsets.step} if self.count > 1 else set()
        return {b - a for a, b in zip(self.offsets, self.offsets[1:])}

    @property
    def span(self):
        """Offset of the last iteration relative to the first."""
        return self.offsets[-1] - self.offsets[0]

    def __repr__(self):
        return f"Loop({self.count}, offsets={self.offsets})"


class AffineWalk(wiring.Component):
    """Step an address through a loop nest, one iteration per ``next`` strobe.

    The address is ``base + sum of each level's offset at its index``. Every index keeps a
    registered "last iteration" flag, so carries never ripple through comparators, and the
    address moves by one of a few precomputed deltas: it is one adder wide whatever the nest.

    Parameters
    ----------
    loops : list of Loop
        Outermost first.
    addr_width : int
        Width of addresses (they wrap modulo ``2**addr_width``).
    offset : int
        Constant added to ``base`` at the start of the walk.

    Members
    -------
    load : In(1)
        Restart the walk at ``base``.
    base : In(addr_width)
        Sampled when ``load`` is high.
    next : In(1)
        Advance to the next iteration (ignored once ``done``).
    addr : Out(addr_width)
        Address of the current iteration.
    first : Out(len(loops))
        Per level (bit 0 = outermost), whether its index is 0.
    last : Out(len(loops))
        Per level, whether its index is the level's last.
    done : Out(1)
        The walk has gone past its last iteration.
    """
    def __init__(self, loops, *, addr_width, offset=0):
        self._loops = list(loops)
        if not self._loops:
            raise ValueError("a walk needs at least one loop")
        self._addr_width = addr_width
        self._offset = offset
        n = len(self._loops)
        super().__init__({
            "load": In(1),
            "base": In(addr_width),
            "next": In(1),
            "addr": Out(addr_width),
            "first": Out(n),
            "last": Out(n, init=(1 << n) - 1),
            "done": Out(1, init=1),
        })

    @property
    def loops(self):
        return list(self._loops)

    @property
    def iterations(self):
        total = 1
        for loop in self._loops:
            total *= loop.count
        return total

    def elaborate(self, platform):
        m = Module()
        loops = self._loops
        n = len(loops)
        wrap = (1 << self._addr_width) - 1

        index = [Signal(range(loop.count), name=f"index{level}") for level, loop in enumerate(loops)]
        start_offset = sum(loop.offsets[0] for loop in loops) + self._offset

        # carry[level]: this level advances (every level inside it is at its last iteration).
        carry = [Signal(name=f"carry{level}") for level in range(n)]
        for level in range(n):
            inner_last = Const(1)
            for inner in range(level + 1, n):
                inner_last = inner_last & self.last[inner]
            m.d.comb += carry[level].eq(self.next & ~self.done & inner_last)

        # The address delta when `level` is the outermost level that advances: step that level,
        # rewind every inner level to its first offset.
        rewind = [sum(loops[inner].span for inner in range(level + 1, n)) for level in range(n)]

        def delta(level, idx):
            loop = loops[level]
            step = loop.offsets[idx + 1] - loop.offsets[idx] if idx + 1 < loop.count else 0
            return step - rewind[level]

        addr_next = Signal(self._addr_width)
        m.d.comb += addr_next.eq(self.addr)
        for level in range(n):
            loop = loops[level]
            with m.If(carry[level] & ~self.last[level]):
                steps = {(step - rewind[level]) & wrap for step in loop.steps}
                if len(steps) == 1:
                    m.d.comb += addr_next.eq(self.addr + steps.pop())
                else:
                    table = Array(Const(delta(level, i) & wrap, unsigned(self._addr_width))
                                  for i in range(loop.count))
                    m.d.comb += addr_next.eq(self.addr + table[index[level]])

        with m.If(self.load):
            start = start_offset & wrap
            m.d.sync += self.addr.eq(self.base + start if start else self.base)
            m.d.sync += self.done.eq(0)
            for level, loop in enumerate(loops):
                m.d.sync += [
                    index[level].eq(0),
                    self.first[level].eq(1),
                    self.last[level].eq(loop.count == 1),
                ]
        with m.Elif(self.next & ~self.done):
            m.d.sync += self.addr.eq(addr_next)
            with m.If(carry[0] & self.last[0]):
                m.d.sync += self.done.eq(1)
            for level, loop in enumerate(loops):
                with m.If(carry[level]):
                    with m.If(self.last[level]):
                        m.d.sync += [
                            index[level].eq(0),
                            self.first[level].eq(1),
                            self.last[level].eq(loop.count == 1),
                        ]
                    with m.Else():
                        m.d.sync += [
                            index[level].eq(index[level] + 1),
                            self.first[level].eq(0),
                            self.last[level].eq(index[level] == loop.count - 2),
                        ]
        return m
