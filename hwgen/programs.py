"""The pipeline programs hwgen knows: its own jobs (gemm, pi), those installed packages declare
under the ``hwgen.programs`` entry-point group, and any :class:`hwgen.kernels.pipeline.Job` a
user names as ``module:Name`` or ``file.py:Name``.

A job declares its options, builds its program, lays out its data and holds its numpy model
(:mod:`hwgen.kernels.pipeline.job`); nothing here knows any one program.
"""

import inspect

from .discovery import Registry
from .kernels.pipeline import Job
from .kernels.programs import PI_MAX_STEPS, GemmJob, PiJob

__all__ = ["ENTRY_POINT_GROUP", "MAX_THREADS", "PI_MAX_STEPS", "PROGRAMS", "GemmJob", "PiJob",
           "program_name", "program_of"]

#: Hardware threads of a program at most.
MAX_THREADS = 64
#: The entry-point group an installed package declares its jobs under.
ENTRY_POINT_GROUP = "hwgen.programs"


def _is_job(obj):
    return inspect.isclass(obj) and issubclass(obj, Job) and obj is not Job


#: The programs by name (``"gemm" in PROGRAMS``); a ``module:Name`` or ``file.py:Name`` is found
#: too.
PROGRAMS = Registry("PROGRAM", {"gemm": GemmJob, "pi": PiJob}, group=ENTRY_POINT_GROUP,
                    accepts=_is_job, kind="pipeline job (a subclass of hwgen.kernels.pipeline.Job)")


def program_name(job):
    """How ``PROGRAMS`` finds the class of ``job`` again (in another process too)."""
    return PROGRAMS.name_of(type(job))


def program_of(name, hardware):
    """The :class:`hwgen.kernels.pipeline.Program` of program ``name`` (a key of
    :data:`PROGRAMS`) that a job's ``hardware()`` parameters describe."""
    return PROGRAMS[name].build_program(**hardware)
