"""The command line: ``python -m hwgen COMMAND ...``."""

import argparse
import gc
import os
import re
import signal
import sys
import warnings
from contextlib import nullcontext

from amaranth.hdl import UnusedElaboratable

from .. import __version__
from .commands import COMMANDS
from .programs import set_command_line
from .options import check_options_apply, resolve_output_folders
from .outputs import summary_aside
from ..errors import (EXIT_SUSPECT, EXIT_USER_ERROR, HwgenError, ParameterError,
                      SuspectMeasurement, did_you_mean)
from .flags import flag_error
from ..sim.cache import CacheUnwritable, tool_environment

__all__ = ["main", "make_parser"]


_INVALID_CHOICE = re.compile(r"argument (?P<option>[^:]+): invalid choice: (?P<value>'.*') "
                             r"\(choose from (?P<choices>.*)\)")


class _Parser(argparse.ArgumentParser):
    """argparse with errors in hwgen's one-line form (exit status 2), options spelled out in
    full (no abbreviations: ``--unrol`` is a typo, not ``--unroll``) and a suggestion for a
    mistyped option or choice."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        invalid = _INVALID_CHOICE.fullmatch(message)
        if invalid:
            # The form of every other choice's message: "--x must be one of a, b, not 'c'".
            choices = [choice.strip("'") for choice in invalid["choices"].split(", ")]
            value = invalid["value"][1:-1]
            option = invalid["option"].split("/")[-1]
            message = (f"{option} must be one of {', '.join(choices)}, not {value!r}"
                       + did_you_mean(value, choices))
        raise HwgenError(message)

    def option_strings(self):
        """Every option this parser takes."""
        return [flag for action in self._actions for flag in action.option_strings]

    def given_options(self, argv):
        """``{flag: title of its option group}`` of the options ``argv`` gives (``--`` ends
        them)."""
        groups = {action: group.title for group in self._action_groups
                  for action in group._group_actions}
        given = {}
        for token in argv:
            if token == "--":
                break
            action = self._option_string_actions.get(token.split("=")[0])
            if action is not None:
                given[token.split("=")[0]] = groups.get(action)
        return given


def _unrecognized(parser, command, extras):
    """The one-line error for arguments no option takes, with the closest option of the
    command for a mistyped one."""
    options = parser.commands[command].option_strings() if command else []
    message = f"unrecognized arguments: {' '.join(extras)}"
    for extra in extras:
        if extra.startswith("-"):
            hint = did_you_mean(extra.split("=")[0], options)
            if hint:
                return f"{message}{hint}"
    return message


def _command_of(argv):
    """The command ``argv`` runs: its first argument that is not an option (hwgen's own
    options, ``--help`` and ``--version``, take no value)."""
    return next((token for token in argv if not token.startswith("-")), None)


def make_parser(argv=None):
    """hwgen's parser. With ``argv``, only the command it runs gets its options (and its module
    imported); the others are known by name and help line, which is all ``hwgen --help`` and
    a mistyped command's error show."""
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
    parser.commands = {}
    running = None if argv is None else _command_of(argv)
    for command in COMMANDS:
        if argv is not None and command.name != running:
            subparsers.add_parser(command.name, help=command.help)
            continue
        module = command.load()
        sub = subparsers.add_parser(command.name, help=command.help,
                                    description=module.DESCRIPTION)
        module.add_options(sub)
        sub.set_defaults(func=module.run)
        parser.commands[command.name] = sub
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
    parser = make_parser(argv)
    if not argv:
        # As git and pip do: the help, on standard output, and success.
        parser.print_help()
        return 0
    # Tools that keep a cache (YoWASP in its own processes) keep it where it can be written
    # (`python -m hwgen` did so before matplotlib was imported).
    os.environ.update(tool_environment())
    interrupted = False
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            raise HwgenError(_unrecognized(parser, getattr(args, "command", None), extras))
        command = parser.commands[args.command]
        args.given_options = command.given_options(argv[1:])
        check_options_apply(args)
        resolve_output_folders(command, args)
        with summary_aside() if getattr(args, "json", None) == "-" else nullcontext():
            try:
                status = args.func(args) or 0
            except ParameterError as error:
                raise flag_error(error) from None
        sys.stdout.flush()   # a reader that went away shows here, not in Python's exit
        return status
    except HwgenError as error:
        # Whatever was built before the error is dropped unused on purpose: no warnings about it.
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        print(f"hwgen: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except CacheUnwritable as error:
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
