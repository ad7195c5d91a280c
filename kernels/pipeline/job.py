"""The job protocol: a pipeline program with its declared options, data, numpy model and shape.

A :class:`Program` says what the hardware threads run; a :class:`Job` is what a user runs: it
declares its options (:class:`Option`: name, type, default, help, range), builds its program
from them, lays out its inputs in a flat memory image, holds a numpy model of the result, and
declares its structure (:class:`ProgramShape`: how often each thread runs each kind of stage,
from the program's own loops) for the cycle model. The built-in GEMM and pi jobs are written
against this protocol exactly as a user's job is; ``hwgen`` finds a job by name, by
``module:Name``/``file.py:Name``, or through the ``hwgen.programs`` entry points.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Job", "Option", "ProgramShape", "add_counts", "share"]


@dataclass(frozen=True)
class Option:
    """One option of a job, as the command line and ``hwgen list`` show it.

    Parameters
    ----------
    name : str
        A Python identifier; the command line spells it ``--name-with-dashes``.
    type : type
        ``int``, ``float``, ``str`` or ``bool``.
    default : object
        The value when not given.
    help : str
        One line for ``--help``.
    low, high : number or None
        The range an ``int`` or ``float`` must lie in (inclusive; ``None``: open).
    choices : tuple or None
        The values allowed, for a ``str``.
    hardware : bool
        Whether the option decides the hardware (``False``: a run-time parameter or data only,
        so the same pipeline serves every value).
    variants : tuple or None
        The values of the job's ``variant`` option this option applies to (``None``: all); a
        value given for another variant is refused.
    """
    name: str
    type: type
    default: object
    help: str
    low: object = None
    high: object = None
    choices: tuple = None
    hardware: bool = True
    variants: tuple = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"option name must be a Python identifier, not {self.name!r}")
        if self.type not in (int, float, str, bool):
            raise TypeError(f"type of option {self.name} must be int, float, str or bool, "
                            f"not {self.type!r}")
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))

    @property
    def flag(self):
        """The command-line spelling: ``--frac-bits`` for ``frac_bits``."""
        return "--" + self.name.replace("_", "-")

    @property
    def allowed(self):
        """What the option allows, in words."""
        if self.choices is not None:
            return ", ".join(map(str, self.choices))
        if self.type is bool:
            return "true, false"
        if self.low is not None and self.high is not None:
            return f"{self.low}..{self.high}"
        if self.low is not None:
            return f">= {self.low}"
        if self.high is not None:
            return f"<= {self.high}"
        return f"any {self.type.__name__}"

    def check(self, value):
        """``value`` if the option allows it; else ``TypeError``/``ValueError`` naming it."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and self.type is not bool or not isinstance(value, self.type):
            raise TypeError(f"{self.name} must be of type {self.type.__name__}, not {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{self.name} must be one of {self.allowed}, not {value!r}")
        low, high = self.low, self.high
        if low is not None and high is not None and not low <= value <= high:
            raise ValueError(f"{self.name} must be between {low} and {high}, not {value}")
        if low is not None and high is None and value < low:
            raise ValueError(f"{self.name} must be at least {low}, not {value}")
        if high is not None and low is None and value > high:
            raise ValueError(f"{self.name} must be at most {high}, not {value}")
        return value

    def allows(self, value):
        """Whether :meth:`check` takes ``value``."""
        try:
            self.check(value)
        except (TypeError, ValueError):
            return False
        return True

    def to_json(self):
        return {"name": self.name, "type": self.type.__name__, "default": self.default,
                "help": self.help, "allowed": self.allowed, "hardware": self.hardware}


def share(count, thread, threads):
    """Iterations ``thread`` runs of ``for i in range(thread, count, threads)``: the trip count
    of a loop whose iterations the threads take in turn."""
    return len(range(thread, count, threads))


def add_counts(*parts):
    """Stage counts by kind, summed: ``add_counts((trips, {"load": 2}), (1, {"compute": 1}))``."""
    total = {}
    for scale, counts in parts:
        for kind, n in counts.items():
            total[kind] = total.get(kind, 0) + scale * n
    return total


@dataclass(frozen=True)
class ProgramShape:
    """What a job does, counted from its program's loops and its parameters.

    Stage kinds are ``compute``, ``join``, ``load``, ``store``, ``acquire``, ``release``,
    ``local_read``, ``local_write`` and ``wait`` (see ``docs/pipeline.md``).

    Parameters
    ----------
    kind : str
        The name the cycle model's characterisation knows the job's behaviour by (the job's
        ``name``, or ``name_variant``); a kind it does not know gets the model's stated default.
    paths : tuple of dict
        Per thread, how often it runs each kind of stage.
    read_beats, write_beats : int
        Off-chip read and write requests of the whole job.
    bytes_read, bytes_written : int
        The bytes those requests move.
    ops : int
        Operations of the job, as the stages' ``ops`` count them.
    sections : int
        Critical sections of the job (0: no lock).
    section : dict
        Stage counts of one critical section, from ``Acquire`` to ``Release``.
    stage_visits : int
        Visits of the most used stage, when one stage is the bottleneck (0: none).
    blocks : tuple or None
        A double-buffered job: ``(blocks, preload path, work path, read beats per block)``.
    """
    kind: str
    paths: tuple
    read_beats: int
    write_beats: int
    bytes_read: int
    bytes_written: int
    ops: int
    sections: int = 0
    section: dict = field(default=None)
    stage_visits: int = 0
    blocks: tuple = None


class Job:
    """A pipeline program a user runs: options, program, memory image, numpy model, shape.

    A subclass sets the class attributes :attr:`name`, :attr:`description` and
    :attr:`options`, and implements :meth:`build_program`, :meth:`memory`, :meth:`expected`
    and :meth:`result`; :meth:`shape` gives the cycle model the program's structure (without
    it, ``estimate`` and ``explore --fast`` refuse the job; ``run`` and ``profile`` need none).

    Parameters
    ----------
    **values
        A value for any of :attr:`options` (the others take their defaults). Each becomes an
        attribute of the job; :meth:`check` then sees them all.

    Raises
    ------
    TypeError, ValueError
        Naming the option, for a value it does not allow.
    """
    #: The job's name, as ``hwgen list`` shows it.
    name = None
    #: One line that says what the job computes.
    description = ""
    #: The :class:`Option` s the job takes.
    options = ()

    def __init__(self, **values):
        declared = {option.name: option for option in self.options}
        for key in values:
            if key not in declared:
                raise TypeError(f"{type(self).__name__} takes the options "
                                f"{', '.join(declared)}, not {key!r}")
        for option in self.options:
            setattr(self, option.name, option.check(values.get(option.name, option.default)))
        variant = values.get("variant", getattr(self, "variant", None))
        for option in self.options:
            if option.name in values and option.variants and variant not in option.variants:
                raise ValueError(f"{option.name} applies to the {' and '.join(option.variants)} "
                                 f"variants of {self.name}, not to {variant}")
        self.check()
        self.program = self.build_program(**self.hardware())

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        #: The values of its ``variant`` option (``("default",)`` without one).
        cls.variants = cls.variant_names()

    @classmethod
    def option(cls, name):
        """The :class:`Option` called ``name``."""
        for option in cls.options:
            if option.name == name:
                return option
        raise KeyError(name)

    @classmethod
    def variant_names(cls):
        """The values of the ``variant`` option (``("default",)`` for a job without one)."""
        try:
            return cls.option("variant").choices
        except KeyError:
            return ("default",)

    def check(self):
        """Raise ``ValueError`` naming an option for a combination the options refuse (each
        option's own range is checked already)."""

    @classmethod
    def build_program(cls, **hardware):
        """The :class:`~hwgen.kernels.pipeline.Program` of the options that decide the
        hardware (what :meth:`hardware` returns)."""
        raise NotImplementedError(f"{cls.__name__} must define build_program()")

    def memory(self):
        """The memory image and the run-time parameters: ``(storage, params)``; ``storage`` is a
        list of unsigned element values the pipeline reads and writes in place."""
        raise NotImplementedError(f"{type(self).__name__} must define memory()")

    def expected(self):
        """The numpy model of the result."""
        raise NotImplementedError(f"{type(self).__name__} must define expected()")

    def result(self, storage):
        """The result, read out of the memory image after the run."""
        raise NotImplementedError(f"{type(self).__name__} must define result()")

    def matches(self, storage):
        """Whether the result in ``storage`` equals the numpy model."""
        return bool(np.array_equal(np.asarray(self.result(storage)),
                                   np.asarray(self.expected())))

    def shape(self):
        """The job's :class:`ProgramShape`, from its loops' trip counts; ``None`` when the job
        declares none."""
        return None

    def cycle_budget(self, memory, host):
        """Cycles after which a run is taken to be stuck: by default ten times the shape's
        busiest thread with every stage waiting the memory's full latency, plus the launches."""
        shape = self.shape()
        if shape is None:
            raise NotImplementedError(f"{type(self).__name__} must define cycle_budget() or "
                                      f"shape()")
        stages = max(sum(path.values()) for path in shape.paths)
        accesses = shape.read_beats + shape.write_beats
        return (10 * stages * (memory.latency_cycles + 2)
                + memory.cycle_budget(accesses, shape.bytes_read + shape.bytes_written)
                + len(shape.paths) * (host.launch_delay_cycles + 100))

    def arguments(self):
        """What rebuilds the job, ``type(job)(**job.arguments())``: the value of every option it
        declares that applies to its variant."""
        variant = getattr(self, "variant", None)
        return {option.name: getattr(self, option.name) for option in self.options
                if option.variants is None or variant in option.variants}

    def parameters(self):
        """The job's parameters, as reports give them: :meth:`arguments`, and any figure a job
        derives from them that a reader wants beside them (override to add it)."""
        return self.arguments()

    def hardware(self):
        """The options that decide the pipeline's hardware: :meth:`build_program`'s keywords."""
        return {option.name: getattr(self, option.name) for option in self.options
                if option.hardware}

    def describe(self):
        """One line: the job and its options."""
        values = ", ".join(f"{key} {value}" for key, value in self.parameters().items())
        return f"{self.name}: {values}"

    def label(self):
        """A short name of the configuration, for plots and tables: the variant (if the job
        has variants) and the threads."""
        threads = f"{self.threads} thread" + "s" * (self.threads != 1)
        variant = self.__dict__.get("variant")
        return threads if variant is None else f"{variant}, {threads}"

    @classmethod
    def explore_values(cls, name, given):
        """The values of option ``name`` that ``explore --fast`` tries when the user gives none
        (``given``: the lists given for the other options); ``None`` for hwgen's default (every
        variant, a ladder of thread counts, the option's default)."""
        return None

    def summary(self, storage):
        """An extra figure of the result for ``hwgen run``'s summary and report, as
        ``{key: value}`` (empty for none)."""
        return {}

    @classmethod
    def to_json(cls):
        """What ``hwgen list`` says of the job."""
        return {"name": cls.name, "description": cls.description,
                "variants": list(cls.variant_names()),
                "options": [option.to_json() for option in cls.options]}

    def __repr__(self):
        return f"<{type(self).__name__} {self.describe()}>"
