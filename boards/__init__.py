"""FPGA devices and boards as data: resources, I/O links, toolchain family and default clock.

The built-in boards are the ``*.toml`` files of this package; a user's own board is a TOML or
JSON file of the same form (see ``docs/boards.md``)::

    from hwgen.boards import get_board
    board = get_board("ulx3s-85f")          # a built-in board by name
    board = get_board("my-board.toml")      # or a board file
"""

from .board import (BoardError, Board, FAMILIES, Link, Resources, TargetPlatform, Toolchain,
                    XILINX_FAMILIES, load_board)
from .costs import COSTS_DIR, cost_families, cost_table
from .registry import builtin_boards, get_board

__all__ = ["Board", "BoardError", "FAMILIES", "Link", "Resources", "TargetPlatform", "Toolchain",
           "XILINX_FAMILIES", "COSTS_DIR", "builtin_boards", "cost_families", "cost_table", "get_board", "load_board"]
