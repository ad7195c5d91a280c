"""What every stage of a program shares, and the two stages that touch nothing outside the thread.

A stage is one step of the datapath that a thread passes through. *Static* stages (:class:`Compute`,
and :class:`~hwgen.kernels.pipeline.sync.Release`) take one cycle and never stall: a thread that enters
one leaves it in the next cycle. *Parking* stages hold a variable-latency operation; they keep the
context of every thread that waits in them in a slot of its own, and their thread scheduler
releases one thread whose operation is done per cycle, in any order. :class:`Join` is a parking
stage without an operation: a reordering point, and where control-flow paths merge.

Stage functions take ``(c, p)``: ``c`` is a :class:`~amaranth.lib.data.View` of the thread's
context (its fields, plus ``tid``), ``p`` a view of the run-time parameters. They return
Amaranth values; they are called once, when the pipeline is elaborated, to build the logic.
"""

import os
import sys

from amaranth.hdl import Value, ValueCastable

__all__ = ["Stage", "Compute", "Join", "check_function", "field_path", "resolve_field"]


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _program_line():
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) \
            == _PACKAGE_DIR:
        if os.path.basename(frame.f_code.co_filename) == "schedule.py":
            return None   # a join the schedule adds: no line of the program made it
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def field_path(path, what="into"):
    """Normalise a context field path: ``"acc"`` or ``("b", 2)`` (element 2 of array field ``b``)."""
    if isinstance(path, str):
        return (path,)
    if (isinstance(path, tuple) and path and isinstance(path[0], str)
            and all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in path[1:])):
        return path
    raise TypeError(f"{what} must be a context field name or a tuple such as ('b', 2), not {path!r}")


def resolve_field(view, path):
    """The part of a context view a field path names."""
    target = view
    for step in path:
        target = target[step]
    return target


def check_function(name, fn):
    if not callable(fn):
        raise TypeError(f"{name} must be a function of (c, p), not {fn!r}")
    return fn


class Stage:
    """Base class of the stage operations.

    Parameters
    ----------
    name : str or None
        Shown in stage listings and probe labels; defaults to the operation's kind.
    """
    #: Whether the stage parks threads (holds a variable-latency operation).
    parking = False
    #: A thread that arrives is ready to leave at once (only for parking stages).
    arrive_ready = False
    kind = "stage"

    def __init__(self, name=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"stage name must be a string, not {name!r}")
        self._name = name
        self._src_loc = _program_line()

    @property
    def name(self):
        return self._name or self.kind

    @property
    def src_loc(self):
        """``(file, line)`` of the program's source that made this stage (the first caller
        outside this package), for profiles per step; None for a stage the schedule made."""
        return self._src_loc

    #: Context field the operation's result is written into, as a path (parking stages).
    result_path = None

    def result_width(self, element_bits):
        """Width of the result written into :attr:`result_path`, given the memory element width."""
        return 0

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class Compute(Stage):
    """Combinational logic from context to context, one cycle.

    Parameters
    ----------
    update : function of (c, p) returning a dict
        Maps field names to their new values; fields it leaves out keep theirs. An array field
        takes a value for the whole field or a list with one value per element.
    ops : int
        Arithmetic operations the stage performs per thread passing through (added to the
        pipeline's ``ops_performed`` probe).
    name : str or None
    """
    kind = "compute"

    def __init__(self, update, *, ops=0, name=None):
        super().__init__(name)
        self._update = check_function("update", update)
        if isinstance(ops, bool) or not isinstance(ops, int) or ops < 0:
            raise ValueError(f"ops must be a non-negative integer, not {ops!r}")
        self._ops = ops

    @property
    def ops(self):
        return self._ops

    def updates(self, c, p):
        """The ``(field path, value)`` assignments of this stage for context view ``c``."""
        result = self._update(c, p)
        if not isinstance(result, dict):
            raise TypeError(f"stage {self.name!r}: update must return a dict of field name to "
                            f"value, not {result!r}")
        fields = [name for name, _ in c.shape()]
        assignments = []
        for key, value in result.items():
            if key not in fields:
                raise ValueError(f"stage {self.name!r}: update sets unknown field {key!r}; the "
                                 f"context has {', '.join(fields)}")
            if key == "tid":
                raise ValueError(f"stage {self.name!r}: the thread id tid is read-only")
            if isinstance(value, (list, tuple)):
                assignments.extend(((key, index), element) for index, element in enumerate(value))
            else:
                assignments.append(((key,), value))
        for _, value in assignments:
            if not isinstance(value, (int, Value, ValueCastable)):
                raise TypeError(f"stage {self.name!r}: value for a field must be an int or an "
                                f"Amaranth value, not {value!r}")
        return assignments


class Join(Stage):
    """A reordering point without an operation: threads wait in slots for the scheduler.

    The schedule inserts one where control-flow paths merge in front of a static stage; a
    program may also place one to decouple two static regions.
    """
    parking = True
    arrive_ready = True
    kind = "join"
