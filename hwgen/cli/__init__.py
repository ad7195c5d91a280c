"""The command line, ``python -m hwgen COMMAND ...``: one module per command
(:mod:`.commands`), the options they share, and how they read and write files."""

from .main import main, make_parser

__all__ = ["main", "make_parser"]
