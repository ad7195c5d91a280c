"""The built-in boards (the TOML files beside this module) and lookup by name or file."""

from functools import cache
from pathlib import Path

from .board import BoardError, load_board

__all__ = ["builtin_boards", "get_board"]

_HERE = Path(__file__).parent


@cache
def builtin_boards():
    """``{name: Board}`` of every built-in board, sorted by name."""
    found = {}
    for path in sorted(_HERE.glob("*.toml")):
        board = load_board(path)
        if board.name != path.stem:
            raise BoardError(f"built-in board file {path.name!r} names its board {board.name!r}")
        found[board.name] = board
    return found


def get_board(name_or_path):
    """A built-in board by name, or a board read from a ``.toml`` / ``.json`` file."""
    boards = builtin_boards()
    if name_or_path in boards:
        return boards[name_or_path]
    if str(name_or_path).lower().endswith((".toml", ".json")):
        return load_board(name_or_path)
    raise BoardError(f"board must be one of {', '.join(boards)} or a .toml/.json board file, "
                     f"not {str(name_or_path)!r}")
