"""Command-line options shared by every command that builds a kernel."""

import re
import sys
import warnings

from ..sim.engine import ENGINES, EngineNotice, EngineUnavailable, resolve_engine
from ..catalog import KERNELS, board_tree_policy, make_window_filter
from ..errors import HwgenError
from ..kernels import BUFFERS, MASK_SHAPES
from ..kernels.window import TREE_POLICIES
from .imageio import read_mask

__all__ = ["add_engine_option", "add_kernel_options", "engine_from_args", "parse_size",
           "window_filter_from_args"]


def parse_size(text, option="--size"):
    """``"3x5"`` -> (3, 5)."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise HwgenError(f"{option} must be NxM with positive integers, such as 3x3, not {text!r}")
    return int(match[1]), int(match[2])


def _tree_stages(text):
    if text in TREE_POLICIES:
        return text
    try:
        return int(text)
    except ValueError:
        raise HwgenError(f"--tree-stages must be {', '.join(TREE_POLICIES)} or a number, "
                         f"not {text!r}") from None


def add_kernel_options(parser):
    """Add KERNEL and the window-filter options to an argparse parser."""
    parser.add_argument("kernel", metavar="KERNEL", help=f"one of: {', '.join(KERNELS)}")
    group = parser.add_argument_group("kernel options")
    group.add_argument("--unroll", type=int, default=1, metavar="U",
                       help="outputs per cycle (default: %(default)s)")
    group.add_argument("--buffer", default="smart", metavar="|".join(BUFFERS),
                       help="buffer strategy (default: %(default)s)")
    group.add_argument("--size", default="3x3", metavar="NxM",
                       help="window rows x columns (default: %(default)s)")
    group.add_argument("--mask", default="rect", metavar="|".join([*MASK_SHAPES, "FILE"]),
                       help="structuring element, or a .npy / text file of 0/1 rows of the window's "
                            "size (default: %(default)s)")
    group.add_argument("--pixel-bits", type=int, default=8, metavar="B",
                       help="bits per pixel, 1..16 (default: %(default)s)")
    group.add_argument("--width", type=int, default=None, metavar="W",
                       help="image width (default: the input image's, else 512)")
    group.add_argument("--height", type=int, default=None, metavar="H",
                       help="image height (default: the input image's, else 512)")
    group.add_argument("--no-pipeline", dest="pipeline", action="store_false",
                       help="run one step at a time instead of pipelining (default: pipelined)")
    group.add_argument("--tree-stages", type=_tree_stages, default=None,
                       metavar="|".join([*TREE_POLICIES, "S"]),
                       help="registers in the reduction tree: lean (a register every two "
                            "comparator levels), fast (one every level) or a number (default: "
                            "fast for a board with 4-input LUTs, else lean, when pipelined; 0 "
                            "otherwise)")
    group.add_argument("--credits", type=int, default=None, metavar="C",
                       help="steps in flight at most (default: datapath latency + 8, rounded "
                            "up to a power of two)")




def window_filter_from_args(args, image_shape=None, board=None):
    """Build the WindowFilter the options describe (image size from ``image_shape`` if not given).

    For a ``board``, an unset ``--tree-stages`` follows :func:`board_tree_policy`.
    """
    if args.buffer not in BUFFERS:
        raise HwgenError(f"--buffer must be one of {', '.join(BUFFERS)}, not {args.buffer!r}")
    size = parse_size(args.size)
    mask = args.mask if args.mask in MASK_SHAPES else read_mask(args.mask)
    width, height = args.width, args.height
    if image_shape is not None:
        image_h, image_w = image_shape
        if width is not None and width != image_w or height is not None and height != image_h:
            raise HwgenError(f"--input image is {image_w} wide and {image_h} high, but --width "
                             f"{width} / --height {height} were given; they must match")
        width, height = image_w, image_h
    tree_stages = args.tree_stages
    if tree_stages is None and board is not None and args.pipeline:
        tree_stages = board_tree_policy(board)
    return make_window_filter(
        args.kernel, size=size, mask=mask, pixel_bits=args.pixel_bits,
        width=512 if width is None else width, height=512 if height is None else height,
        unroll=args.unroll, buffer=args.buffer, pipeline=args.pipeline,
        tree_stages=tree_stages, credits=args.credits)


def add_engine_option(parser):
    """Add ``--engine`` to a command that simulates."""
    parser.add_argument("--engine", default=None, choices=ENGINES,
                        help="pysim: Amaranth's simulator; compiled: the design compiled to C++ "
                             "with Yosys's CXXRTL, identical results, about a thousand times "
                             "faster (default: compiled when a C++ compiler is found, else "
                             "pysim; $HWGEN_ENGINE overrides)")


def engine_from_args(args, *, quiet=False):
    """The engine ``--engine`` asks for, checked before anything runs; a fallback to
    Amaranth's simulator is said in one line unless ``quiet``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EngineNotice)
        try:
            engine = resolve_engine(args.engine)
        except (EngineUnavailable, ValueError) as error:
            raise HwgenError(f"--engine: {error}") from None
    for notice in caught:
        if issubclass(notice.category, EngineNotice) and not quiet:
            print(f"hwgen: {notice.message}", file=sys.stderr)
    return engine
