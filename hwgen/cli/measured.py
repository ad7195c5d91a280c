"""What the resource commands (``synth``, ``estimate``, ``overhead``) share: their options, the
design they measure (the PE as ``build`` writes it, with its HMM, unless ``--no-instrument``)
and how their reports say which design that was."""

from ..catalog import design_name, resolve_board
from ..resources.synth import synth_command
from ..versions import tool_versions
from .options import (add_board_option, add_instrument_option, add_json_option,
                      add_kernel_options, add_quiet_option, add_system_build_options,
                      design_from_args, hmm_label)
from .outputs import check_file_option

__all__ = ["DEFAULT_BOARD", "add_measured_options", "measured_design", "measured_report"]

#: The board a measurement is for unless told.
DEFAULT_BOARD = "ulx3s-85f"


def add_measured_options(parser, *, what, instrument=True, quiet="print nothing on success",
                         programs=()):
    """KERNEL (or one of ``programs``), the kernel options, ``--board``, ``--no-instrument`` (with
    ``instrument``; without, the bare PE is the design), ``--pes`` and ``--probes``, ``--json``
    (of ``what``) and ``-q``."""
    add_kernel_options(parser, programs=programs)
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
    ``synthesis``: a board without an open synthesis flow fails before anything is built."""
    check_file_option("--json", args.json)
    board = resolve_board(args.board)
    if synthesis:
        synth_command(board)
    pe, design = design_from_args(args, board)
    return board, pe, design, design_name(args.kernel, pe)


def measured_report(args, pe, design, result):
    """The JSON report of a measurement ``result`` (with ``to_json()``) of ``design``."""
    return {"tool_versions": tool_versions(), "kernel": args.kernel,
            "parameters": pe.parameters(), "instrumented": design is not pe,
            "measured": hmm_label(design is not pe), **result.to_json()}
