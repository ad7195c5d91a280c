"""Control flow of a program: loops and branches over lists of stages.

Conditions are functions of ``(c, p)`` like the stage functions; they are evaluated on the
context a thread carries out of the stage before them. A loop edge sends the thread back to the
loop's first stage; paths that merge in front of a static stage meet in a :class:`~kernels.
pipeline.stage.Join` (the schedule inserts it), so static stages never receive two threads at once.
"""

from .stage import Stage, check_function

__all__ = ["Loop", "If", "While", "check_body"]


def check_body(body, what="body"):
    """Validate a list of stages and control-flow items; returns it as a tuple."""
    if isinstance(body, (Stage, Loop, If)):
        body = [body]
    if not isinstance(body, (list, tuple)) or not body:
        raise ValueError(f"{what} must be a non-empty list of stages, loops and branches, "
                         f"not {body!r}")
    for item in body:
        if not isinstance(item, (Stage, Loop, If)):
            raise TypeError(f"{what} holds {item!r}; allowed are stages (Compute, Load, Store, "
                            f"LocalRead, LocalWrite, Acquire, Release, Wait, Join), Loop and If")
    return tuple(body)


class Loop:
    """Run ``body`` once, then again as long as ``repeat`` holds (a do-while loop).

    Parameters
    ----------
    body : list
        Stages and control-flow items.
    repeat : function of (c, p)
        Evaluated on the context at the end of each pass.
    """
    def __init__(self, body, *, repeat):
        self.body = check_body(body, "loop body")
        self.repeat = check_function("repeat", repeat)

    def __repr__(self):
        return f"Loop({list(self.body)!r})"


class If:
    """Run ``then`` when ``cond`` holds, otherwise ``orelse``.

    Parameters
    ----------
    cond : function of (c, p)
    then : list
    orelse : list or None
    """
    def __init__(self, cond, then, orelse=None):
        self.cond = check_function("cond", cond)
        self.then = check_body(then, "then")
        self.orelse = () if orelse is None else check_body(orelse, "orelse")

    def __repr__(self):
        return f"If({list(self.then)!r}, {list(self.orelse)!r})"


def While(cond, body):
    """Run ``body`` as long as ``cond`` holds, possibly never: ``If(cond, [Loop(body, repeat=cond)])``."""
    return If(cond, [Loop(body, repeat=cond)])
