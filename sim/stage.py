"""Stages of a simulation that count no cycles (converting a design, compiling its model), told
to whoever shows progress.

The simulator knows when such a stage starts and ends; how it is shown is the flow's business
(:class:`hwgen.progress.Progress` listens here), so the simulator needs nothing of the flow."""

from contextlib import contextmanager

__all__ = ["listeners", "stage"]

#: Who shows progress now, innermost last; each has ``_enter_stage(desc)`` and ``_leave_stage()``.
listeners = []


@contextmanager
def stage(desc):
    """Within the innermost listener, a stage that counts nothing, ``desc`` ("compiling the
    simulation model"). Without a listener (none shown, or quiet), nothing is told."""
    if not listeners:
        yield
        return
    listener = listeners[-1]
    listener._enter_stage(desc)
    try:
        yield
    finally:
        listener._leave_stage()
