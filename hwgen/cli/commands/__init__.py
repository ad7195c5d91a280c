"""One module per command, with ``DESCRIPTION``, ``add_options(parser)`` and ``run(args)``.

:data:`COMMANDS` names each command, its module and its line in ``hwgen --help`` without
importing the module: a run imports only the module of the command it runs (each pulls in what
its command needs: Amaranth, the simulators, the roofline, the synthesis flow)."""

import importlib
from typing import NamedTuple

__all__ = ["COMMANDS", "Command"]


class Command(NamedTuple):
    """A command: its ``name`` on the command line, its ``module`` in this package and its
    ``help`` (one line for ``hwgen --help``)."""
    name: str
    module: str
    help: str

    def load(self):
        """The module that implements the command."""
        return importlib.import_module(f"{__name__}.{self.module}")


COMMANDS = [
    Command("list", "listing", "list kernels, programs, their parameters and the boards"),
    Command("build", "build", "generate Verilog, RTLIL and a manifest for a kernel"),
    Command("sim", "sim", "simulate a kernel on an image and report its figures"),
    Command("run", "run",
            "run a multithreaded-pipeline program, profile its threads, export traces"),
    Command("profile", "profile",
            "profile a kernel or a program: the cycles each source line and step is active in"),
    Command("synth", "synth", "synthesize a kernel or program and measure its resources and Fmax"),
    Command("estimate", "estimate",
            "estimate a kernel's or program's resources and cycles without synthesis or simulation"),
    Command("overhead", "overhead",
            "synthesize a kernel or program bare and with its HMM and compare"),
    Command("roofline", "roofline", "measure design points and draw the extended roofline"),
    Command("explore", "explore", "sweep design points in parallel and rank them on the roofline"),
    Command("report", "report", "make one self-contained HTML page of what the commands measured"),
    Command("deploy", "deploy", "build a bitstream with a UART bridge to run a kernel on a board"),
    Command("board", "board",
            "run a deployed kernel on a board (or its simulation) and read its HMM"),
]
