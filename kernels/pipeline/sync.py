"""Synchronisation between threads: hardware locks for critical sections, and barriers.

A :class:`Lock` is one register and an owner per thread. :class:`Acquire` is a parking stage: a
thread waits in it (it is *spinning*) until the lock is free and the round-robin arbiter over
every waiting thread of every Acquire stage of that lock picks it; from then on, until it passes
the lock's :class:`Release`, it is in its *critical* section. :class:`Release` is a static stage.
The lock is granted again at the earliest in the cycle after a release.

A :class:`Barrier` holds every thread that reaches one of its :class:`Wait` stages (they are
spinning too) until all threads of the pipeline wait at it, then lets them all go. Every thread
must reach it the same number of times, or the ones waiting wait forever.
"""

from dataclasses import dataclass
from functools import reduce
from operator import or_

from amaranth.hdl import Cat, Signal

from .arbiter import RoundRobin
from .stage import Stage

__all__ = ["Lock", "Barrier", "Acquire", "Release", "Wait", "build_sync"]


# A lock or a barrier is known by its identity: two of the same name are two resources (which
# the pipeline refuses), hence eq=False.
@dataclass(frozen=True, eq=False)
class _Resource:
    name: str

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"{type(self).__name__.lower()} name must be an identifier, not "
                             f"{self.name!r}")


class Lock(_Resource):
    """A hardware lock that guards a critical section.

    Parameters
    ----------
    name : str
        An identifier.
    """


class Barrier(_Resource):
    """A barrier that every thread of the pipeline must reach before any goes on.

    Parameters
    ----------
    name : str
        An identifier.
    """


def _check(kind, value):
    if not isinstance(value, kind):
        raise TypeError(f"expected a {kind.__name__}, not {value!r}")
    return value


class _LockStage(Stage):
    def __init__(self, lock, *, name=None):
        super().__init__(name)
        self._lock = _check(Lock, lock)

    @property
    def lock(self):
        return self._lock


class Acquire(_LockStage):
    """Wait until ``lock`` is granted to the thread.

    Parameters
    ----------
    lock : Lock
    name : str or None
    """
    parking = True
    kind = "acquire"


class Release(_LockStage):
    """Give ``lock`` back (a static stage).

    Parameters
    ----------
    lock : Lock
    name : str or None
    """
    kind = "release"


class Wait(Stage):
    """Wait at ``barrier`` until every thread does.

    Parameters
    ----------
    barrier : Barrier
    name : str or None
    """
    parking = True
    kind = "barrier"

    def __init__(self, barrier, *, name=None):
        super().__init__(name)
        self._barrier = _check(Barrier, barrier)

    @property
    def barrier(self):
        return self._barrier


def build_sync(m, *, acquires, releases, waits, threads):
    """Build the locks and barriers.

    Parameters
    ----------
    m : Module
    acquires, waits : list of (Acquire or Wait, ParkingStage)
    releases : list of (Release, valid, context view)
        A thread with that context passes the Release stage when ``valid`` is high.
    threads : int

    Returns
    -------
    (spinning, critical) : per-thread Signals
        Waiting in an Acquire or Wait stage; holding a lock.
    """
    spinning = Signal(threads)
    critical = Signal(threads)

    locks = dict.fromkeys([op.lock for op, _ in acquires] + [op.lock for op, _, _ in releases])
    owners = []
    for lock in locks:
        stages = [stage for op, stage in acquires if op.lock is lock]
        held = Signal(name=f"lock_{lock.name}_held")
        owner = Signal(threads, name=f"lock_{lock.name}_owner")
        owners.append(owner)
        if stages:
            m.submodules[f"lock_{lock.name}_arbiter"] = arbiter = RoundRobin(len(stages) * threads)
            m.d.comb += [
                arbiter.requests.eq(Cat(stage.wait for stage in stages)),
                arbiter.accept.eq(~held),
            ]
            granted = arbiter.grant & (~held).replicate(len(arbiter.grant))
            grants = [granted[i * threads:(i + 1) * threads] for i in range(len(stages))]
            for stage, grant in zip(stages, grants):
                m.d.comb += [stage.issue.eq(grant), stage.complete.eq(grant)]
            with m.If(arbiter.valid & ~held):
                m.d.sync += [held.eq(1), owner.eq(owner | reduce(or_, grants))]
        for op, valid, c in releases:
            if op.lock is lock:
                with m.If(valid):
                    m.d.sync += held.eq(0)
                    for t in range(threads):
                        with m.If(c.tid == t):
                            m.d.sync += owner[t].eq(0)
    if owners:
        m.d.comb += critical.eq(reduce(or_, owners))

    barriers = dict.fromkeys(op.barrier for op, _ in waits)
    waiting_any = [stage.wait for _, stage in acquires]
    for barrier in barriers:
        stages = [stage for op, stage in waits if op.barrier is barrier]
        waiting = Signal(threads, name=f"barrier_{barrier.name}_waiting")
        m.d.comb += waiting.eq(reduce(or_, [stage.wait for stage in stages]))
        for stage in stages:
            release = stage.wait & waiting.all().replicate(threads)
            m.d.comb += [stage.issue.eq(release), stage.complete.eq(release)]
        waiting_any.append(waiting)
    if waiting_any:
        m.d.comb += spinning.eq(reduce(or_, waiting_any))
    return spinning, critical
