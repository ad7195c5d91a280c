"""Round-robin arbitration between requesters, and selection by a one-hot grant."""

from functools import reduce
from operator import or_

from amaranth.hdl import Const, Module, Mux, Signal, Value, ValueCastable
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["RoundRobin", "select"]


def select(onehot, values):
    """The value whose bit is set in ``onehot`` (zero when none is); an AND-OR multiplexer."""
    values = [Value.cast(v.as_value() if isinstance(v, ValueCastable) else v) for v in values]
    if len(values) != len(onehot):
        raise ValueError(f"{len(values)} values for a {len(onehot)}-bit grant")
    width = max(len(v) for v in values)
    return reduce(or_, (Mux(onehot[i], v, Const(0, width)) for i, v in enumerate(values)))


class RoundRobin(wiring.Component):
    """Grant one of ``count`` requesters, starting the search after the last one served.

    The grant is one-hot. A grant is *taken* in a cycle where ``valid`` and ``accept`` are both
    high; the next search then starts just above it, so every requester is served within
    ``count`` takes.

    Parameters
    ----------
    count : int
        Requesters, at least 1.
    hold : bool
        Keep an untaken grant until it is taken, so a payload chosen by it stays stable while a
        stream's ``valid`` is high and ``ready`` is low. Requesters must then keep requesting
        until they are served.

    Members
    -------
    requests : In(count)
    accept : In(1)
        The grantee is served this cycle (tie to 1 when a grant is always used).
    grant : Out(count)
        One-hot; zero when nobody requests.
    valid : Out(1)
        ``grant`` is not zero.
    """
    def __init__(self, count, *, hold=False):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a positive integer, not {count!r}")
        if not isinstance(hold, bool):
            raise TypeError(f"hold must be a bool, not {hold!r}")
        self._count = count
        self._hold = hold
        super().__init__({
            "requests": In(count),
            "accept": In(1),
            "grant": Out(count),
            "valid": Out(1),
        })

    @property
    def count(self):
        return self._count

    @property
    def hold(self):
        return self._hold

    def elaborate(self, platform):
        m = Module()
        n = self._count

        # Requesters strictly above the last one served get priority.
        above = Signal(n)
        preferred = Signal(n)
        candidates = Signal(n)
        fresh = Signal(n)
        m.d.comb += [
            preferred.eq(self.requests & above),
            candidates.eq(Mux(preferred.any(), preferred, self.requests)),
            fresh.eq(candidates & (~candidates + 1)),     # the lowest set bit
        ]

        if self._hold:
            held = Signal()
            held_grant = Signal(n)
            m.d.comb += [
                self.grant.eq(Mux(held, held_grant, fresh)),
                self.valid.eq(held | self.requests.any()),
            ]
            m.d.sync += held.eq(self.valid & ~self.accept)
            with m.If(self.valid & ~self.accept):
                m.d.sync += held_grant.eq(self.grant)
        else:
            m.d.comb += [
                self.grant.eq(fresh),
                self.valid.eq(self.requests.any()),
            ]

        with m.If(self.valid & self.accept):
            m.d.sync += above.eq(~(self.grant | (self.grant - 1)))
        return m
