"""The options of a pipeline program's job, which the commands that run, profile, estimate or
synthesize a program share, and the job they describe."""

import math

from ..errors import HwgenError
from ..programs import PROGRAMS, GemmJob, PiJob
from ..sim import HostModel
from .options import add_option

__all__ = ["add_program_options", "job_from_args"]


def add_program_options(parser, *, host=True):
    """The options of a program's job (read by :func:`job_from_args`) and, with ``host``, of
    its host."""
    gemm, pi = GemmJob.options, PiJob.options
    group = parser.add_argument_group("program options")
    add_option(group, "--variant", default=None, metavar="V",
               help=f"gemm: {'|'.join(GemmJob.variants)}; pi: {'|'.join(PiJob.variants)}",
               shown=f"gemm {gemm['variant']['default']}, pi {pi['variant']['default']}")
    add_option(group, "--threads", type=int, default=gemm["threads"]["default"], metavar="T",
               help="hardware threads")
    size = group.add_mutually_exclusive_group()
    add_option(size, "--dim", type=int, default=None, metavar="N", help="gemm: matrix size",
               shown=gemm["dim"]["default"])
    add_option(size, "--steps", type=int, default=None, metavar="S",
               help="pi: steps of the series", shown=pi["steps"]["default"])
    add_option(group, "--lanes", type=int, default=None, metavar="V",
               help="gemm vector/blocked: elements per vector request, a divisor of --dim",
               shown=gemm["lanes"]["default"])
    add_option(group, "--element-bits", type=int, default=gemm["element_bits"]["default"],
               metavar="B", help="gemm: bits per matrix element")
    add_option(group, "--frac-bits", type=int, default=None, metavar="F",
               help="fixed-point fraction bits",
               shown=f"gemm {gemm['frac_bits']['default']} = integers, pi "
                     f"{pi['frac_bits']['default']}")
    if host:
        add_option(group, "--launch-delay", type=int, default=HostModel().launch_delay_cycles,
                   metavar="CYCLES", help="host cycles to start one thread")


def job_from_args(args, program=None):
    """The job (program, data and numpy model) the options describe, of ``program`` (default
    the PROGRAM argument)."""
    program = args.program if program is None else program
    if program not in PROGRAMS:
        raise HwgenError(f"PROGRAM must be one of {', '.join(PROGRAMS)}, not {program!r}")
    if program == "gemm":
        if args.steps is not None:
            raise HwgenError("--steps applies to pi; gemm takes --dim")
        defaults = GemmJob.options
        variant = args.variant or defaults["variant"]["default"]
        dim = defaults["dim"]["default"] if args.dim is None else args.dim
        lanes = defaults["lanes"]["default"] if args.lanes is None else args.lanes
        if args.lanes is None and variant in ("vector", "blocked") and dim > 0 and dim % lanes:
            raise HwgenError(f"--lanes must divide --dim {dim}, and its default {lanes} does "
                             f"not: give --lanes, such as {math.gcd(dim, lanes)}")
        return GemmJob(variant, dim=dim,
                       threads=args.threads, element_bits=args.element_bits,
                       frac_bits=(defaults["frac_bits"]["default"] if args.frac_bits is None
                                  else args.frac_bits),
                       lanes=lanes, seed=getattr(args, "seed", 0))
    if args.dim is not None:
        raise HwgenError("--dim applies to gemm; pi takes --steps")
    if args.variant not in (None, *PiJob.variants):
        raise HwgenError(f"--variant of pi must be {PiJob.variants[0]}, not {args.variant!r}")
    defaults = PiJob.options
    return PiJob(steps=defaults["steps"]["default"] if args.steps is None else args.steps,
                 threads=args.threads,
                 frac_bits=(defaults["frac_bits"]["default"] if args.frac_bits is None
                            else args.frac_bits))
