"""The kernels the command line knows, by name."""

from dataclasses import dataclass

from kernels import BUFFERS, MASK_SHAPES, WindowFilter

from .errors import HwgenError

__all__ = ["KERNELS", "KernelInfo", "kernel_info", "make_window_filter"]


@dataclass(frozen=True)
class KernelInfo:
    name: str
    description: str
    op: str

    def parameters(self):
        """The parameters a user sets, with their defaults and allowed values."""
        return {
            "size": {"default": "3x3", "allowed": "NxM, N and M >= 1, at most the image size"},
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
    """Build a :class:`kernels.WindowFilter` for a named kernel; bad parameters raise HwgenError."""
    info = kernel_info(kernel)
    try:
        return WindowFilter(info.op, **params)
    except (TypeError, ValueError) as error:
        raise HwgenError(str(error)) from None
