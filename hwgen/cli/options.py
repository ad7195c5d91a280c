"""Command-line options that several commands share, and what they describe.

Every option's help ends in its default, said once: :func:`add_option` writes it, so no
formatter adds a second one.
"""

import argparse
import gc
import os
import re
import sys
import warnings

from amaranth.hdl import UnusedElaboratable

from ..sim.engine import ENGINES, EngineNotice, EngineUnavailable, resolve_engine
from ..catalog import KERNELS, KernelInfo, board_tree_policy, make_window_filter, system_of
from ..programs import PROGRAMS
from ..errors import HwgenError, did_you_mean
from ..kernels import BUFFERS, MASK_SHAPES
from ..kernels.window import TREE_POLICIES
from ..instrument import PROBE_PRESETS
from ..sim import MemoryModel, instrument_pe, instrument_system
from .imageio import read_mask

__all__ = ["add_option", "add_engine_option", "add_kernel_options", "add_board_option", "add_link_option",
           "add_instrument_option", "add_memory_options", "add_output_option", "add_json_option",
           "add_quiet_option", "add_system_build_options", "add_deprecated_alias", "check_options_apply",
           "resolve_output_folders",
           "mask_from_args", "pes_from_args",
           "parse_size", "window_filter_from_args", "design_from_args", "engine_from_args",
           "engine_line", "simulation_seconds",
           "memory_from_args",
           "hmm_label", "DEFAULT_SIZE", "DEFAULT_IMAGE_SIDE"]

#: The window and the image side when nothing else gives them.
DEFAULT_SIZE = (3, 3)
DEFAULT_IMAGE_SIDE = 512


def add_option(parser, *flags, help, shown="%(default)s", **kwargs):
    """``parser.add_argument`` with ``(default: shown)`` after the help; ``shown`` says the
    default in words where the value alone would not (``None`` for a flag, which shows none).
    Choices read ``A|B|C`` in the usage, as every option that lists what it takes."""
    if "choices" in kwargs and "metavar" not in kwargs:
        kwargs["metavar"] = "|".join(map(str, kwargs["choices"]))
    if shown is not None:
        help = f"{help} (default: {shown})"
    return parser.add_argument(*flags, help=help, **kwargs)


def parse_size(text, option="--size", form="NxM", example="3x3"):
    """``"3x5"`` -> (3, 5); ``form`` and ``example`` are what the option's help shows."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise HwgenError(f"{option} must be {form} with positive integers, such as {example}, "
                         f"not {text!r}")
    return int(match[1]), int(match[2])


def _tree_stages(text):
    if text in TREE_POLICIES:
        return text
    try:
        return int(text)
    except ValueError:
        raise HwgenError(f"--tree-stages must be {', '.join(TREE_POLICIES)} or a number, "
                         f"not {text!r}") from None


def add_kernel_options(parser, *, image=False, programs=()):
    """Add KERNEL and the window-filter options; ``image``: the command reads an input image,
    whose size is the default of ``--width`` and ``--height``; ``programs``: the positional may
    name one of these programs too (KERNEL|PROGRAM)."""
    if programs:
        parser.add_argument("kernel", metavar="KERNEL|PROGRAM",
                            help=f"a kernel, one of: {', '.join(KERNELS)}; or a program, one "
                                 f"of: {', '.join(programs)}, or a job of your own as "
                                 f"module:Name or file.py:Name")
    else:
        parser.add_argument("kernel", metavar="KERNEL",
                            help=f"one of: {', '.join(KERNELS)}; or an image PE of your own as "
                                 f"module:Name or file.py:Name")
    group = parser.add_argument_group("kernel options")
    add_option(group, "--unroll", type=int, default=1, metavar="U", help="outputs per cycle")
    add_option(group, "--buffer", default="smart", metavar="|".join(BUFFERS),
               help="buffer strategy")
    add_option(group, "--size", default=None, metavar="NxM", help="window rows x columns",
               shown="the --mask file's shape, else {}x{}".format(*DEFAULT_SIZE))
    add_option(group, "--mask", default="rect", metavar="|".join([*MASK_SHAPES, "FILE"]),
               help="structuring element, or a .npy / text file of 0/1 rows (`0 1 0`, `0,1,0` "
                    "or `010`)")
    add_option(group, "--pixel-bits", type=int, default=8, metavar="B", help="bits per pixel, 1..16")
    side = f"the --input image's, else {DEFAULT_IMAGE_SIDE}" if image else DEFAULT_IMAGE_SIDE
    add_option(group, "--width", type=int, default=None, metavar="W", help="image width",
               shown=side)
    add_option(group, "--height", type=int, default=None, metavar="H", help="image height",
               shown=side)
    add_option(group, "--no-pipeline", dest="pipeline", action="store_false",
               help="run one step at a time instead of pipelining", shown="pipelined")
    add_option(group, "--tree-stages", type=_tree_stages, default=None,
               metavar="|".join([*TREE_POLICIES, "S"]),
               help="registers in the reduction tree: lean (a register every two comparator "
                    "levels), fast (one every level) or a number",
               shown="fast for a board with 4-input LUTs, else lean, when pipelined; 0 otherwise")
    add_option(group, "--credits", type=int, default=None, metavar="C",
               help="steps in flight at most",
               shown="datapath latency + 8, rounded up to a power of two")
    from .kernels import add_user_kernel_options     # it builds on this module's add_option
    add_user_kernel_options(group)


#: The option groups that only a kernel takes, and those that only a program takes.
KERNEL_GROUPS = ("kernel options",)
PROGRAM_GROUPS = ("program options",)


def check_options_apply(args):
    """Refuse, in one line, an option given on the command line whose group does not apply to
    the command's KERNEL|PROGRAM (``profile dilation --threads 4``, ``estimate gemm --unroll
    8``): ``args.given_options`` maps each given flag to its group's title."""
    name = getattr(args, "kernel", None)
    if name in KERNELS:
        refused, what = PROGRAM_GROUPS, f"kernel {name}"
    elif name in PROGRAMS:
        refused, what = KERNEL_GROUPS, f"program {name}"
    else:
        return
    for flag, title in getattr(args, "given_options", {}).items():
        group = (title or "").split(" (", 1)[0]     # "program options (`hwgen list` says...)"
        if group in refused:
            raise HwgenError(f"{flag} is one of the {group}; it does not apply to {what}")


def add_board_option(parser, *, default, help):
    """``--board B``: ``help`` says what the board is for."""
    add_option(parser, "--board", default=default, metavar="B",
               help=f"{help}; a built-in board (see `hwgen list`) or a .toml/.json board file",
               shown="%(default)s" if default is not None else "none")


def add_link_option(parser, *, shown):
    """``--link NAME``: the board link that bounds the memory's bandwidth."""
    add_option(parser, "--link", default=None, metavar="NAME",
               help="the board's link, by name or a unique part of it", shown=shown)


def add_instrument_option(parser, *, measured=False):
    """``--no-instrument``; ``measured``: the command measures resources, of the PE as `build`
    writes it unless told."""
    if measured:
        help, shown = ("measure the bare PE, without the hardware measurement module (HMM) that "
                       "`build` and `sim` add", "the PE with its HMM, as `build` writes it")
    else:
        help, shown = ("leave out the hardware measurement module (HMM)", "every FSM, stream and "
                       "PE figure is measured and readable on the hmm__* ports")
    add_option(parser, "--no-instrument", dest="instrument", action="store_false", help=help,
               shown=shown)


def add_system_build_options(parser):
    """``--pes P|max`` and ``--probes``: a system of PEs behind one port, and its HMM."""
    group = parser.add_argument_group("system of PEs")
    add_option(group, "--pes", default=None, metavar="P|max",
               help="a system of P PEs sharing one off-chip port through an arbiter, with one "
                    "HMM (what `sim --pes` simulates); max: the roofline's SC, the most PEs whose "
                    "system (PEs, interconnect and, unless --no-instrument, HMM) fits one "
                    "device of --board by the estimate",
               shown="one PE, no system")
    add_option(group, "--probes", default="default", choices=PROBE_PRESETS,
               metavar="|".join(PROBE_PRESETS),
               help="what the HMM measures: minimal (busy cycles, bytes and ops at the port; a "
                    "program: also its thread-state records), default (also stream counters at "
                    "the port and every PE's figures; a program: also per-thread stall counters, "
                    "state profiles and samples), full (also read latency and every state "
                    "machine and stream inside the PEs; a program: also a counter per source "
                    "line); one PE: minimal or the default HMM")


def pes_from_args(args, pe, board):
    """PEs of the system the options ask for (``None``: one PE, no system)."""
    pes = getattr(args, "pes", None)
    if pes is None:
        return None
    if pes == "max":
        if board is None:
            raise HwgenError("--pes max takes the PEs that fit a board: give --board")
        from ..roofline.model import board_scalability   # the roofline's flow, for --pes max

        return board_scalability(pe, board, bytes_per_cycle=system_link(args, board),
                                 probes=getattr(args, "probes", "default")
                                 if getattr(args, "instrument", False) else None)[0]
    try:
        count = int(pes)
    except ValueError:
        count = 0
    if count < 1:
        raise HwgenError(f"--pes must be a positive integer or max, not {pes!r}")
    return count


def add_output_option(parser, flag, metavar, what, suffix=None):
    """An option that names a file or folder to write ``what`` into (missing folders are made).

    With a ``suffix``, the option names a file, and a path that ends in ``/`` names the folder
    to write it into under the name ``COMMAND-KERNEL`` + ``suffix`` (see
    :func:`resolve_output_folders`)."""
    action = add_option(parser, flag, metavar=metavar, default=None, help=f"write {what}",
                        shown="none")
    action.file_suffix = suffix
    return action


def resolve_output_folders(parser, args):
    """Give a file option that names a folder (its path ends in ``/``) the file's name in it:
    ``sim dilation --json js/`` writes ``js/sim-dilation.json``."""
    positional = getattr(args, "kernel", None) or getattr(args, "program", None)
    name = args.command + (f"-{positional}" if positional else "")
    for action in parser._actions:
        suffix = getattr(action, "file_suffix", None)
        value = getattr(args, action.dest, None)
        if suffix and isinstance(value, str) and value.endswith(("/", os.sep)):
            setattr(args, action.dest, f"{value}{name}{suffix}")


class _DeprecatedAlias(argparse.Action):
    """An old name of an option: works as the new one, with a note on standard error."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"hwgen: {option_string} is deprecated, use {self.new_flag}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser, old, new):
    """Accept ``old`` as a hidden alias of the option ``new`` (same destination)."""
    action = next(a for a in parser._actions if new in a.option_strings)
    alias = parser.add_argument(old, dest=action.dest, metavar=action.metavar,
                                action=_DeprecatedAlias, help=argparse.SUPPRESS)
    alias.new_flag = new
    alias.file_suffix = getattr(action, "file_suffix", None)


def add_json_option(parser, what):
    add_option(parser, "--json", metavar="FILE", default=None, shown="none",
               help=f"write {what} as JSON; - for standard output (then the summary goes to "
                    f"standard error)").file_suffix = ".json"


def add_quiet_option(parser, help="print nothing on success"):
    add_option(parser, "-q", "--quiet", action="store_true", help=help, shown=None)


def hmm_label(instrumented):
    """How outputs say which design was measured."""
    return "with HMM" if instrumented else "bare"


def mask_from_args(args):
    """``(size, mask)`` of ``--size`` and ``--mask``: a shape's name or a file's 0/1 array,
    whose shape is the size unless ``--size`` gives it (then they must agree)."""
    mask = args.mask if args.mask in MASK_SHAPES else read_mask(args.mask)
    if args.size is None:
        return (DEFAULT_SIZE if isinstance(mask, str) else mask.shape), mask
    size = parse_size(args.size)
    if not isinstance(mask, str) and mask.shape != size:
        raise HwgenError(f"--size {args.size} differs from the --mask file's shape "
                         f"{mask.shape[0]}x{mask.shape[1]}; leave --size out or make them "
                         f"match")
    return size, mask


def window_filter_from_args(args, image_shape=None, board=None):
    """Build the WindowFilter the options describe (image size from ``image_shape`` if not given,
    window size from a mask file if not given).

    For a ``board``, an unset ``--tree-stages`` follows :func:`board_tree_policy`. A kernel of
    the user's (an image PE class) is built from its declared options.
    """
    kind = KERNELS.get_or_error(args.kernel)
    if not isinstance(kind, KernelInfo):
        from .kernels import user_kernel_from_args
        return user_kernel_from_args(args, kind, image_shape)
    if args.buffer not in BUFFERS:
        raise HwgenError(f"--buffer must be one of {', '.join(BUFFERS)}, not {args.buffer!r}"
                         + did_you_mean(args.buffer, BUFFERS))
    size, mask = mask_from_args(args)
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
        width=DEFAULT_IMAGE_SIDE if width is None else width,
        height=DEFAULT_IMAGE_SIDE if height is None else height,
        unroll=args.unroll, buffer=args.buffer, pipeline=args.pipeline,
        tree_stages=tree_stages, credits=args.credits)


def system_link(args, board):
    """Bytes per cycle of the link a system's memory channels are sized for: ``board``'s
    tightest link (or ``--link``) at its clock (or ``--clock``); ``None`` (unlimited, a
    channel per PE) without a board."""
    from ..roofline.model import system_bytes_per_cycle   # the roofline's flow, for systems

    if board is None:
        return None
    clock = getattr(args, "clock", None) or board.clock_mhz
    return system_bytes_per_cycle(board, clock, getattr(args, "link", None))


def design_from_args(args, board=None):
    """``(pe, design)``: the PE (or, with ``--pes``, the :class:`hwgen.kernels.PESystem`) the
    options describe and the design to build or measure, it with its HMM (of ``--probes``)
    unless ``--no-instrument`` (for ``board``'s part when given)."""
    pe = window_filter_from_args(args, board=board)
    count = pes_from_args(args, pe, board)
    if count is not None:
        with warnings.catch_warnings():
            # The first filter only gave the parameters of the system's PEs.
            warnings.simplefilter("ignore", UnusedElaboratable)
            template, pe = pe, None
            pe = system_of(template, count, bytes_per_cycle=system_link(args, board))
            del template
            gc.collect()
    if not args.instrument:
        return pe, pe
    platform = None if board is None else board.elaboration_platform()
    probes = getattr(args, "probes", "default")
    if count is not None:
        return pe, instrument_system(pe, probes=probes, platform=platform)
    return pe, instrument_pe(pe, platform=platform, probes=probes)


def add_memory_options(parser, *, seeded):
    """The memory model's options; ``seeded`` says what else ``--seed`` draws (``None``: the
    command draws nothing, and has no ``--seed``)."""
    group = parser.add_argument_group("memory model")
    add_option(group, "--mem-bandwidth", type=float, default=None, metavar="BYTES_PER_CYCLE",
               help="read + write bandwidth in bytes per cycle, fractions allowed",
               shown="unlimited")
    add_option(group, "--mem-latency", type=int, default=1, metavar="CYCLES",
               help="cycles from a read request to its response")
    add_option(group, "--mem-jitter", type=int, default=0, metavar="CYCLES",
               help="extra random latency 0..CYCLES per response")
    add_option(group, "--mem-backpressure", type=float, default=0.0, metavar="P",
               help="probability a port stalls in a cycle")
    if seeded is not None:
        add_option(group, "--seed", type=int, default=0, metavar="S",
                   help=f"seed of {seeded} and of the memory's jitter and backpressure")
    return group


_MEMORY_OPTIONS = {
    "bandwidth_bytes_per_cycle": "--mem-bandwidth", "latency_cycles": "--mem-latency",
    "jitter_cycles": "--mem-jitter", "backpressure": "--mem-backpressure",
}


def memory_from_args(args):
    """The memory model of the memory options (and ``--seed``, checked here for every command
    that draws from it)."""
    seed = getattr(args, "seed", 0)
    if seed < 0:
        raise HwgenError(f"--seed must be an integer >= 0, not {seed}")
    try:
        return MemoryModel(bandwidth_bytes_per_cycle=args.mem_bandwidth,
                           latency_cycles=args.mem_latency, jitter_cycles=args.mem_jitter,
                           backpressure=args.mem_backpressure, seed=getattr(args, "seed", 0))
    except ValueError as error:
        message = str(error)
        for field, option in _MEMORY_OPTIONS.items():
            message = message.replace(field, option)
        # None is how Python says "unlimited"; the option says it by being left out.
        message = message.replace(" or None", "")
        raise HwgenError(message) from None


def add_engine_option(parser):
    """Add ``--engine`` to a command that simulates."""
    add_option(parser, "--engine", default=None, choices=ENGINES,
               help="pysim: Amaranth's simulator; compiled: the design compiled to C++ with "
                    "Yosys's CXXRTL, the same results hundreds of times faster once compiled; "
                    "auto: compiled when its model is cached or compiling costs less than it "
                    "saves for the job's predicted cycles, else pysim",
               shown="auto; $HWGEN_ENGINE overrides")


def engine_from_args(args, *, quiet=False):
    """The engine ``--engine`` (or ``$HWGEN_ENGINE``) asks for, checked before anything runs; a
    fallback to Amaranth's simulator is said in one line unless ``quiet``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EngineNotice)
        try:
            engine = resolve_engine(args.engine, name="--engine")
        except (EngineUnavailable, ValueError) as error:
            raise HwgenError(str(error)) from None
    for notice in caught:
        if issubclass(notice.category, EngineNotice) and not quiet:
            print(f"hwgen: {notice.message}", file=sys.stderr)
    return engine


def simulation_seconds(info, elapsed):
    """Of ``elapsed`` seconds a simulation took, those not spent compiling its model (``info``:
    the run's ``engine``)."""
    return max(elapsed - info.get("compile_seconds", 0.0), 0.0)


def engine_line(info, elapsed, cycles):
    """How long simulating ``cycles`` cycles took (``elapsed``: the compile excluded, see
    :func:`simulation_seconds`) and by which engine: ``simulated 2,073,620 cycles in 0.9 s by
    the compiled engine (2,300,000 cycles/s; compiled in 8.1 s)``."""
    if info["name"] == "pysim":
        return (f"simulated {cycles:,} cycles in {elapsed:.1f} s by Amaranth's simulator "
                f"({cycles / elapsed:,.0f} cycles/s)")
    running = max(elapsed, 1e-9)
    built = ("model from the cache" if info["cached"]
             else f"compiled in {info['compile_seconds']:.1f} s")
    return (f"simulated {cycles:,} cycles in {running:.1f} s by the compiled engine "
            f"({cycles / running:,.0f} cycles/s; {built})")
