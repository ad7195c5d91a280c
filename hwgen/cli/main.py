"""The command line: ``python -m hwgen COMMAND ...``."""

import argparse
import gc
import os
import signal
import sys
import warnings

from amaranth.hdl import UnusedElaboratable

from .. import __version__
from .commands import COMMANDS
from .programs import set_command_line
from ..errors import EXIT_SUSPECT, EXIT_USER_ERROR, HwgenError, SuspectMeasurement

__all__ = ["main", "make_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with errors in hwgen's one-line form (exit status 2)."""

    def error(self, message):
        raise HwgenError(message)


def make_parser():
    parser = _Parser(
        prog="hwgen",
        description="Generate instrumented FPGA accelerators and measure them.",
        epilog=f"Exit status: 0 done; {EXIT_USER_ERROR} bad input or a tool failed (nothing "
               f"written); {EXIT_SUSPECT} done and outputs written, but a measurement is suspect "
               f"(a saturated counter, traffic or a result that differs from its model: the "
               f"outputs say which). `hwgen COMMAND --help` tells a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"hwgen {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                       required=True, title="commands")
    for command in COMMANDS:
        sub = subparsers.add_parser(command.NAME, help=command.HELP,
                                    description=command.DESCRIPTION)
        command.add_options(sub)
        sub.set_defaults(func=command.run)
    return parser


def _quiet_stdout():
    """After the reader of stdout went away: send what is still buffered nowhere, so that
    Python's own flush at exit does not complain either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _forget_interrupted_simulation():
    """Collect what an interrupt left behind: Amaranth's testbench coroutines, stopped in the
    middle of an ``await``, complain ("Exception ignored ... aclose()") as they are collected."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    set_command_line(argv)    # a program named as file.py:Name brings its options
    parser = make_parser()
    if not argv:
        # What argparse would say, and the commands to choose from.
        parser.print_help(sys.stderr)
        return 2
    interrupted = False
    try:
        args = parser.parse_args(argv)
        status = args.func(args) or 0
        sys.stdout.flush()   # a reader that went away shows here, not in Python's exit
        return status
    except HwgenError as error:
        # Whatever was built before the error is dropped unused on purpose: no warnings about it.
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        print(f"hwgen: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except SuspectMeasurement as suspect:
        print(f"hwgen: suspect measurement: {suspect}", file=sys.stderr)
        return EXIT_SUSPECT
    except BrokenPipeError:
        # The reader stopped reading (`hwgen list | head -1`): stop quietly, as Unix tools do.
        _quiet_stdout()
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        interrupted = True
    # Outside the handler, so that the interrupt's traceback no longer holds the simulation.
    if interrupted:
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        _forget_interrupted_simulation()
        print("hwgen: interrupted", file=sys.stderr)
        return 130
