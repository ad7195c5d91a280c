"""The options that set the library's parameters: a :class:`hwgen.errors.ParameterError` raised
while a command validates its parameters is printed with the option's name."""

from ..errors import HwgenError

__all__ = ["FLAGS", "flag_error"]

#: Parameter name (as the library's signatures spell it) -> the option that sets it.
FLAGS = {
    "jobs": "-j", "resources": "--resources", "pes": "--pes", "out_dir": "--out",
    "variant": "--variant", "dim": "--dim", "threads": "--threads", "lanes": "--lanes",
    "element_bits": "--element-bits", "frac_bits": "--frac-bits", "steps": "--steps",
    "program": "PROGRAM",
    "size": "--size", "mask": "--mask", "pixel_bits": "--pixel-bits", "width": "--width",
    "height": "--height", "unroll": "--unroll", "buffer": "--buffer",
    "tree_stages": "--tree-stages", "credits": "--credits", "board": "--board",
    "link": "--link", "devices": "--devices", "clock": "--clock", "scheduler": "--scheduler",
    "seeds": "--seeds", "target_mhz": "--target-mhz", "engine": "--engine",
}


def flag_error(error):
    """The :class:`HwgenError` the command line prints for a
    :class:`~hwgen.errors.ParameterError`: the option in place of the parameter's name (the
    name itself when no option sets it)."""
    return HwgenError(error.named(FLAGS.get(error.parameter, error.parameter)))
