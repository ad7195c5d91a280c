"""The options of an image PE of the user's (a kernel named as ``module:Name``, ``file.py:Name``
or by an entry point) and the PE they describe.

Such a kernel declares its options (:class:`hwgen.kernels.pipeline.Option`). The ones named like
the window filters' shared image options (``width``, ``height``, ``pixel_bits``, ``unroll``) take
those flags; every other becomes a flag of its own (``--name-with-dashes``).
"""

import argparse

from ..catalog import KERNELS, KernelInfo
from ..discovery import is_spec
from ..errors import HwgenError
from .options import add_option
from .programs import command_line, option_error

__all__ = ["GRID_SHARED_OPTIONS", "SHARED_OPTIONS", "add_user_kernel_options", "user_kernel_from_args",
           "user_kernel_grid", "user_kernels"]

#: Kernel options whose window-filter flags a user's kernel shares.
SHARED_OPTIONS = ("width", "height", "pixel_bits", "unroll")
#: Those of them the design grid of ``explore`` and ``roofline`` has (``--image``, ``--unroll``).
GRID_SHARED_OPTIONS = ("width", "height", "unroll")
#: Window-filter options a user's kernel does not take, by dest, with their defaults.
_WINDOW_ONLY = {"buffer": "smart", "size": None, "mask": "rect", "pipeline": True,
                "tree_stages": None, "credits": None}


def user_kernels():
    """``{name: class}`` of the user's kernels: installed ones and those the command line
    names by place."""
    kernels = {name: KERNELS[name] for name in KERNELS if not isinstance(KERNELS[name], KernelInfo)}
    for text in command_line():
        if is_spec(text) and text not in kernels:
            try:
                if text in KERNELS:
                    kernels[text] = KERNELS[text]
            except HwgenError:
                pass    # said in one line when the command reads its KERNEL
    return kernels


def add_user_kernel_options(group, *, lists=False):
    """The flags of the user's kernels' own options (beside the shared image options); with
    ``lists``, each takes a comma-separated list (a design space)."""
    seen = set()
    shared = GRID_SHARED_OPTIONS if lists else SHARED_OPTIONS
    for name, kind in user_kernels().items():
        for option in kind.options:
            if option.name in shared or option.name in seen:
                continue
            seen.add(option.name)
            convert = {bool: lambda text: text.lower() in ("1", "true", "yes", "on"),
                       int: int, float: float, str: str}[option.type]
            try:
                add_option(group, option.flag, dest=f"kernel_{option.name}", default=None,
                           type=str if lists else convert,
                           metavar="LIST" if lists else option.name.upper(),
                           help=f"{kind.name}: {option.help} ({option.allowed})"
                                + (" (comma-separated)" if lists else ""),
                           shown=option.default)
            except argparse.ArgumentError:
                pass    # a flag the command has already: the user's kernel cannot take it


def user_kernel_from_args(args, kind, image_shape=None):
    """The user's kernel ``kind`` built from the options (image size from ``image_shape``
    when given); window-filter options it does not take are refused in one line."""
    declared = {option.name for option in kind.options}
    for dest, default in _WINDOW_ONLY.items():
        if getattr(args, dest, default) != default:
            flag = "--no-pipeline" if dest == "pipeline" else "--" + dest.replace("_", "-")
            raise HwgenError(f"{flag} applies to the window filters, not to {kind.name}")
    values = {}
    for name in SHARED_OPTIONS:
        value = getattr(args, name, None)
        if name not in declared:
            if name in ("width", "height") and value is not None or \
                    name == "unroll" and value not in (None, 1) or \
                    name == "pixel_bits" and value not in (None, 8):
                raise HwgenError(f"--{name.replace('_', '-')} applies to the window filters, "
                                 f"not to {kind.name}")
            continue
        if value is not None:
            values[name] = value
    if image_shape is not None:
        height, width = image_shape
        for name, size in (("width", width), ("height", height)):
            if values.get(name, size) != size:
                raise HwgenError(f"--input image is {width} wide and {height} high, but "
                                 f"--{name} {values[name]} was given; they must match")
            values[name] = size
    for option in kind.options:
        value = getattr(args, f"kernel_{option.name}", None)
        if value is not None:
            values[option.name] = value
    try:
        return kind(**values)
    except (TypeError, ValueError) as error:
        raise option_error(error, kind) from None


def _values(option, text):
    convert = {int: int, float: float, str: str,
               bool: lambda item: {"true": True, "false": False}[item.lower()]}[option.type]
    try:
        values = [convert(item.strip()) for item in str(text).split(",")]
    except (KeyError, ValueError):
        raise HwgenError(f"{option.flag} must be a comma-separated list of "
                         f"{option.type.__name__} values, not {text!r}") from None
    if len(set(values)) != len(values):
        raise HwgenError(f"{option.flag} lists a value twice: {text!r}")
    return values


def user_kernel_grid(args, kind, *, width, height, sweep_defaults):
    """``{option: [values]}`` of a user's kernel in ``explore``/``roofline``: ``width`` and
    ``height`` from ``--image``, ``--unroll`` as a list when the kernel takes it, its own options
    as lists; the window grid's other options (``sweep_defaults``: dest to default) refused
    when given."""
    declared = {option.name: option for option in kind.options}
    for dest, default in sweep_defaults.items():
        if dest == "unroll" and "unroll" in declared:
            continue
        if getattr(args, dest, default) != default:
            raise HwgenError(f"--{dest.replace('_', '-')} applies to the window filters, not to "
                             f"{kind.name}")
    grid = {}
    for name, size in (("width", width), ("height", height)):
        if name in declared:
            grid[name] = [size]
    if "unroll" in declared and args.unroll != sweep_defaults.get("unroll"):
        grid["unroll"] = _values(declared["unroll"], args.unroll)
    for name, option in declared.items():
        text = getattr(args, f"kernel_{name}", None)
        if text is not None and name not in GRID_SHARED_OPTIONS:
            grid[name] = _values(option, text)
    return grid
