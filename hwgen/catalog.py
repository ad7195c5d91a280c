"""The kernels hwgen knows by name, the names of their design points, and the boards they are
built for."""

import hashlib
from dataclasses import dataclass

from .boards import Board, BoardError, get_board
from .errors import HwgenError
from .kernels import BUFFERS, MASK_SHAPES, WindowFilter
from .kernels.window import default_credits

__all__ = ["KERNELS", "KernelInfo", "board_tree_policy", "design_name", "kernel_info",
           "make_window_filter", "resolve_board"]


@dataclass(frozen=True)
class KernelInfo:
    name: str
    description: str
    op: str

    def parameters(self):
        """The parameters a user sets, with their defaults and allowed values."""
        return {
            "size": {"default": "3x3", "allowed": "NxM, N and M >= 1, at most the image size; "
                                                  "a mask file's shape when not given"},
            "mask": {"default": "rect", "allowed": [*MASK_SHAPES, "FILE (.npy or text of 0/1 rows)"]},
            "pixel_bits": {"default": 8, "allowed": "1..16"},
            "width": {"default": 512, "allowed": ">= M"},
            "height": {"default": 512, "allowed": ">= N"},
            "unroll": {"default": 1, "allowed": ">= 1; line: divides width; smart: <= H-N+1; "
                                                  "none: <= W-M+1"},
            "buffer": {"default": "smart", "allowed": list(BUFFERS)},
            "pipeline": {"default": True, "allowed": [True, False]},
            "tree_stages": {"default": "lean (pipelined) / 0",
                            "allowed": "lean (a register every two comparator levels), fast "
                                       "(every level), or 0..tree levels"},
            "credits": {"default": "latency + 8, power of two (pipelined) / 1",
                        "allowed": ">= 1"},
        }

    def to_json(self):
        return {"name": self.name, "description": self.description, "op": self.op,
                "parameters": self.parameters()}


KERNELS = {
    "dilation": KernelInfo("dilation", "grey-scale dilation: maximum over a window", "max"),
    "erosion": KernelInfo("erosion", "grey-scale erosion: minimum over a window", "min"),
}


def kernel_info(name):
    if name not in KERNELS:
        raise HwgenError(f"kernel must be one of {', '.join(KERNELS)}, not {name!r}")
    return KERNELS[name]


def make_window_filter(kernel, **params):
    """Build a :class:`hwgen.kernels.WindowFilter` for a named kernel; bad parameters raise HwgenError."""
    info = kernel_info(kernel)
    try:
        return WindowFilter(info.op, **params)
    except (TypeError, ValueError) as error:
        raise HwgenError(str(error)) from None


def board_tree_policy(board):
    """The register policy a board's fabric needs: ``fast`` for 4-input LUTs, else ``lean``."""
    return "fast" if board.resources.lut_inputs <= 4 else "lean"


def design_name(kernel, pe):
    """A name for a design that says its parameters: ``dilation_3x3_rect_u8_smart_p8_512x512``."""
    mask = pe.mask_name
    if mask == "custom":
        mask = "mask" + hashlib.sha256(pe.mask.tobytes() + bytes(pe.mask.shape)).hexdigest()[:8]
    parts = [kernel, f"{pe.rows}x{pe.cols}", mask, f"u{pe.unroll}", pe.buffer,
             f"p{pe.pixel_bits}", f"{pe.width}x{pe.height}"]
    if not pe.pipeline:
        parts.append("nopipe")
    default_policy = "lean" if pe.pipeline else None
    if pe.tree_policy is not None and pe.tree_policy != default_policy:
        parts.append(pe.tree_policy)
    elif pe.tree_policy is None and (pe.pipeline or pe.tree_stages):
        parts.append(f"t{pe.tree_stages}")
    if pe.credits != default_credits(pe.datapath_latency, pe.pipeline):
        parts.append(f"c{pe.credits}")
    return "_".join(parts)


def resolve_board(board):
    """A :class:`hwgen.boards.Board` from a board, a built-in board's name or a board file."""
    if isinstance(board, Board):
        return board
    try:
        return get_board(board)
    except BoardError as error:
        raise HwgenError(f"--board: {error}") from None
