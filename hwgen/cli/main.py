"""The command line: ``python -m hwgen COMMAND ...``."""

import argparse
import sys
import warnings

from amaranth.hdl import UnusedElaboratable

from .. import __version__
from .commands import COMMANDS
from ..errors import EXIT_SUSPECT, EXIT_USER_ERROR, HwgenError, SuspectMeasurement

__all__ = ["main"]


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
               f"outputs say which).",
    )
    parser.add_argument("--version", action="version", version=f"hwgen {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                       required=True)
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv=None):
    try:
        args = make_parser().parse_args(argv)
        return args.func(args) or 0
    except HwgenError as error:
        # Whatever was built before the error is dropped unused on purpose: no warnings about it.
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        print(f"hwgen: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except SuspectMeasurement as suspect:
        print(f"hwgen: suspect measurement: {suspect}", file=sys.stderr)
        return EXIT_SUSPECT
    except KeyboardInterrupt:
        print("hwgen: interrupted", file=sys.stderr)
        return 130
