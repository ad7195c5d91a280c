"""A generator for multithreaded, stage-controlled pipelines (the Nymble-MT execution model).

A :class:`Program` describes what each thread runs: its context, its run-time parameters and an
ordered list of stages with loops and branches. :class:`Pipeline` turns it into a PE whose
datapath is shared by all threads. See ``docs/pipeline.md`` for how to write a program.
"""

from .control import If, Loop, While
from .job import Job, Option, ProgramShape
from .local import LocalMemory, LocalRead, LocalWrite
from .offchip import Load, Store
from .pipeline import Pipeline, ThreadState
from .program import Program
from .stage import Compute, Join, Stage
from .sync import Acquire, Barrier, Lock, Release, Wait

__all__ = [
    "Acquire", "Barrier", "Compute", "If", "Job", "Join", "Load", "LocalMemory", "LocalRead",
    "LocalWrite", "Lock", "Loop", "Pipeline", "Program", "Release", "Stage", "Store",
    "Option", "ProgramShape", "ThreadState", "Wait", "While",
]
