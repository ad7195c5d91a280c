"""The kernels hwgen knows by name, the names of their design points, and the boards they are
built for.

A kernel is a built-in window filter (dilation, erosion: a :class:`KernelInfo`) or an image PE
class of the user's (a :class:`hwgen.kernels.pe.ProcessingElement` subclass with a ``name``,
a ``description`` and declared ``options``), named as ``module:Name`` or ``file.py:Name`` or
declared by an installed package under the ``hwgen.kernels`` entry points.
"""

import hashlib
import inspect
from dataclasses import dataclass

from .boards import Board, BoardError, get_board
from .discovery import Registry
from .errors import HwgenError, ParameterError
from .kernels import (BUFFERS, MASK_SHAPES, PESystem, WindowFilter, beat_bytes, channels_for,
                      window_system_of)
from .kernels.pe import ProcessingElement
from .kernels.mask import mask_problem, structuring_element
from .kernels.separable import ColumnPatterns
from .kernels.window import TREE_POLICIES, default_credits

__all__ = ["ENTRY_POINT_GROUP", "KERNELS", "KernelInfo", "board_tree_policy", "is_user_kernel", "check_window_parameters", "design_name", "design_title",
           "kernel_info", "make_window_filter", "resolve_board", "system_of"]


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


#: The entry-point group an installed package declares its kernels under.
ENTRY_POINT_GROUP = "hwgen.kernels"


def is_user_kernel(obj):
    """Whether ``obj`` is an image-PE class of the user's that the commands can build: a
    :class:`~hwgen.kernels.pe.ProcessingElement` subclass that declares ``options``."""
    return (inspect.isclass(obj) and issubclass(obj, ProcessingElement)
            and not issubclass(obj, WindowFilter)
            and isinstance(getattr(obj, "options", None), tuple))


#: The kernels by name (``"dilation" in KERNELS``); ``module:Name`` and ``file.py:Name`` of a
#: user's kernel are found too.
KERNELS = Registry("kernel", {
    "dilation": KernelInfo("dilation", "grey-scale dilation: maximum over a window", "max"),
    "erosion": KernelInfo("erosion", "grey-scale erosion: minimum over a window", "min"),
}, group=ENTRY_POINT_GROUP, accepts=lambda obj: isinstance(obj, KernelInfo) or is_user_kernel(obj),
   kind="kernel (a window filter, or an image PE class with declared options)")


def kernel_info(name):
    info = KERNELS.get_or_error(name)
    if not isinstance(info, KernelInfo):
        raise HwgenError(f"{name} is an image PE of its own, not a window filter")
    return info


def make_window_filter(kernel, *, size=(3, 3), mask="rect", pixel_bits=8, width=512, height=512,
                       unroll=1, buffer="smart", pipeline=True, tree_stages=None, credits=None):
    """Build a :class:`hwgen.kernels.WindowFilter` for a named kernel.

    The parameters are the filter's; a parameter a user can get wrong raises
    :class:`hwgen.errors.ParameterError` naming it, before anything is built.
    """
    info = kernel_info(kernel)
    check_window_parameters(size=size, mask=mask, pixel_bits=pixel_bits, width=width,
                            height=height, unroll=unroll, buffer=buffer, tree_stages=tree_stages,
                            credits=credits)
    return WindowFilter(info.op, size, mask=mask, pixel_bits=pixel_bits, width=width,
                        height=height, unroll=unroll, buffer=buffer, pipeline=pipeline,
                        tree_stages=tree_stages, credits=credits)


def _positive(parameter, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(parameter, f"must be a positive integer, not {value!r}")
    return value


def check_window_parameters(*, size, mask, pixel_bits, width, height, unroll, buffer,
                            tree_stages, credits):
    """Raise :class:`hwgen.errors.ParameterError`, naming the parameter and what it allows, for
    the first window-filter parameter a user got wrong (the rules
    :class:`hwgen.kernels.WindowFilter` enforces)."""
    pair = isinstance(size, (tuple, list)) and len(size) == 2
    if not pair or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in size):
        shown = "x".join(map(str, size)) if pair else repr(size)
        raise ParameterError("size", f"must be NxM with positive integers, such as 3x3, "
                                     f"not {shown}")
    rows, cols = size
    problem = mask_problem(mask, rows, cols)
    if problem is not None:
        name, _, rest = problem.partition(" ")
        raise ParameterError(name, rest)
    if isinstance(pixel_bits, bool) or not isinstance(pixel_bits, int) \
            or not 1 <= pixel_bits <= 16:
        raise ParameterError("pixel_bits", f"must be between 1 and 16, not {pixel_bits!r}")
    _positive("width", width)
    _positive("height", height)
    if rows > height or cols > width:
        raise ParameterError("size", f"{rows}x{cols} must fit in the image {height}x{width} "
                                     f"(rows x cols)")
    if 2 * width * height > 1 << 64:
        raise ParameterError("height", f"must be at most {(1 << 63) // width} for an image "
                                       f"{width} pixels wide (2**63 pixels), not {height}")
    _positive("unroll", unroll)
    if buffer not in BUFFERS:
        raise ParameterError("buffer", f"must be one of {', '.join(BUFFERS)}, not {buffer!r}")
    out_width, out_height = width - cols + 1, height - rows + 1
    if buffer == "line" and width % unroll:
        raise ParameterError("unroll", f"must divide the image width {width} for the line "
                                       f"buffer, not {unroll}")
    if buffer == "smart" and unroll > out_height:
        raise ParameterError("unroll", f"must be at most the output height {out_height} for "
                                       f"the smart buffer, not {unroll}")
    if buffer == "none" and unroll > out_width:
        raise ParameterError("unroll", f"must be at most the output width {out_width} without "
                                       f"a buffer, not {unroll}")
    if tree_stages is not None and tree_stages not in TREE_POLICIES:
        patterns = ColumnPatterns(structuring_element(mask, rows, cols))
        levels = 0 if buffer == "none" else patterns.vertical_depth + patterns.horizontal_depth
        if isinstance(tree_stages, bool) or not isinstance(tree_stages, int) \
                or not 0 <= tree_stages <= levels:
            raise ParameterError("tree_stages", f"must be between 0 and {levels} for this "
                                                f"window and buffer, or one of "
                                                f"{', '.join(TREE_POLICIES)}, not {tree_stages!r}")
    if credits is not None:
        _positive("credits", credits)


def system_of(pe, pes, bytes_per_cycle=None):
    """A :class:`hwgen.kernels.PESystem` of ``pes`` PEs like ``pe``, each filtering its own
    frame, the frames side by side in memory, with memory channels for a link of
    ``bytes_per_cycle`` (``None``: unlimited, a channel per PE).

    ``pe`` is a window filter or an image PE of the user's; the user's class is built again with
    the values of its declared options. When its addresses cannot reach ``pes`` frames, its
    class must take an ``addr_width`` keyword, which is then given the width they need.
    """
    if isinstance(pes, bool) or not isinstance(pes, int) or pes < 1:
        raise ParameterError("pes", f"must be a positive integer, not {pes!r}")
    if isinstance(pe, WindowFilter):
        return window_system_of(pe, pes, bytes_per_cycle)
    kind = type(pe)
    values = {option.name: getattr(pe, option.name) for option in kind.options}
    # Each frame is the input image, then the output image (the harness's layout).
    frame = pe.width * pe.height + pe.out_width * pe.out_height
    needed = max(1, (pes * frame - 1).bit_length())
    if needed > pe.addr_width:
        if "addr_width" not in inspect.signature(kind).parameters:
            fits = (1 << pe.addr_width) // frame
            raise ParameterError("pes", f"must be at most {fits} for {kind.name}: its "
                                        f"{pe.addr_width}-bit addresses reach {fits} frames and "
                                        f"{kind.__name__} takes no addr_width to widen them, "
                                        f"not {pes}")
        values["addr_width"] = needed
    copies = [kind(**values) for _ in range(pes)]
    return PESystem(copies, channels=channels_for(pes, beat_bytes(copies[0]), bytes_per_cycle))


def board_tree_policy(board):
    """The register policy a board's fabric needs: ``fast`` for 4-input LUTs, else ``lean``."""
    return "fast" if board.resources.lut_inputs <= 4 else "lean"


def design_name(kernel, pe):
    """A name for a design that says its parameters: ``dilation_3x3_rect_u8_smart_p8_512x512``
    (``_x<P>`` after it for a :class:`hwgen.kernels.PESystem` of P such PEs)."""
    if isinstance(pe, PESystem):
        return f"{design_name(kernel, pe.pes[0])}_x{pe.count}"
    if not isinstance(pe, WindowFilter):
        return "_".join([type(pe).name, *(f"{option.name}{getattr(pe, option.name)}"
                                          for option in type(pe).options)])
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


def design_title(kernel, pe):
    """One line that says a PE's parameters, for titles."""
    if not isinstance(pe, WindowFilter):
        return f"{type(pe).name} " + ", ".join(f"{option.name} {getattr(pe, option.name)}"
                                               for option in type(pe).options)
    return (f"{kernel} {pe.rows}x{pe.cols} {pe.mask_name}, buffer {pe.buffer}, unroll "
            f"{pe.unroll}, {pe.width}x{pe.height}")


def resolve_board(board):
    """A :class:`hwgen.boards.Board` from a board, a built-in board's name or a board file."""
    if isinstance(board, Board):
        return board
    try:
        return get_board(board)
    except BoardError as error:
        raise ParameterError("board", f": {error}") from None
