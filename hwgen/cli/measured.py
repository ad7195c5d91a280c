"""What the resource commands (``synth``, ``estimate``, ``overhead``) share: their options, the
design they measure (the PE as ``build`` writes it, with its HMM, unless ``--no-instrument``)
and how their reports say which design that was."""

from ..catalog import design_name, resolve_board
from ..errors import HwgenError
from ..kernels.pipeline import Pipeline
from ..programs import PROGRAMS
from ..resources.synth import synth_command
from ..sim import instrument_pipeline
from ..records import SynthRecord
from ..versions import tool_versions
from .options import (add_board_option, add_instrument_option, add_json_option,
                      add_kernel_options, add_quiet_option, add_system_build_options,
                      design_from_args, hmm_label)
from .outputs import check_file_option
from .programs import add_program_options, job_from_args

__all__ = ["DEFAULT_BOARD", "add_measured_options", "measured_design", "measured_parameters",
           "measured_report", "synth_record"]

#: The board a measurement is for unless told.
DEFAULT_BOARD = "ulx3s-85f"


def add_measured_options(parser, *, what, instrument=True, quiet="print nothing on success",
                         programs=(), host=False):
    """KERNEL (or one of ``programs``), the kernel options, ``--board``, ``--no-instrument`` (with
    ``instrument``; without, the bare PE is the design), ``--pes`` and ``--probes``, ``--json``
    (of ``what``) and ``-q``; with ``programs``, a program's options too (and its host's, with
    ``host``)."""
    add_kernel_options(parser, programs=programs)
    if programs:
        add_program_options(parser, host=host)
    add_board_option(parser, default=DEFAULT_BOARD, help="the board whose part it is measured for")
    if instrument:
        add_instrument_option(parser, measured=True)
    else:
        parser.set_defaults(instrument=False)
    add_system_build_options(parser)
    add_json_option(parser, what)
    add_quiet_option(parser, quiet)


def measured_design(args, *, synthesis):
    """``(board, pe, design, name)`` the options describe, every option checked first;
    ``synthesis``: a board without an open synthesis flow fails before anything is built. For
    a program, ``pe`` is its :class:`~hwgen.kernels.pipeline.Pipeline` and ``design`` that
    pipeline with the profiling HMM of ``--probes``."""
    check_file_option("--json", args.json)
    board = resolve_board(args.board)
    if synthesis:
        synth_command(board)
    if args.kernel in PROGRAMS:
        job = job_from_args(args, args.kernel)
        if getattr(args, "pes", None) is not None:
            raise HwgenError("--pes builds systems of window-filter PEs; a program's threads "
                             "share one pipeline (--threads)")
        pe = Pipeline(job.program)
        design = (instrument_pipeline(pe, probes=args.probes,
                                      platform=board.elaboration_platform())
                  if args.instrument else pe)
        return board, pe, design, f"{job.program.name}_t{job.threads}"
    pe, design = design_from_args(args, board)
    return board, pe, design, design_name(args.kernel, pe)


def measured_parameters(args, pe):
    """The parameters of the kernel's PE or of the program's job, as the reports give them."""
    return job_from_args(args, args.kernel).parameters() if args.kernel in PROGRAMS else pe.parameters()


def measured_report(args, pe, design, result):
    """The JSON report of a measurement ``result`` (with ``to_json()``) of ``design``."""
    what = "program" if args.kernel in PROGRAMS else "kernel"
    return {"tool_versions": tool_versions(), what: args.kernel,
            "parameters": measured_parameters(args, pe), "instrumented": design is not pe,
            "measured": hmm_label(design is not pe), **result.to_json()}


def synth_record(args, pe, design, result):
    """The :class:`~hwgen.records.SynthRecord` of a synthesis ``result`` of ``design``."""
    what = "program" if args.kernel in PROGRAMS else "kernel"
    return SynthRecord(what, args.kernel, measured_parameters(args, pe), design is not pe,
                       hmm_label(design is not pe), result)
