"""Hardware generators: processing elements that share the port contract of :mod:`hwgen.kernels.pe`."""

from .mask import MASK_SHAPES, structuring_element
from .pe import BeatFormat, ControlSignature, pe_members
from .reduction import OP_ALIASES, REDUCTIONS, Reduction, reduction
from .walk import AffineWalk, Loop
from .window import BUFFERS, WindowFilter, WindowTraffic, dilation, erosion
from .window_buffer import WindowBuffer
from .direct import Unbuffered
from .smart_buffer import SmartBuffer
from .line_buffer import LineBuffer
from .interconnect import ChannelPort, Interconnect, channels_for
from .system import (PESystem, beat_bytes, frame_elements, system_addr_width, window_system,
                     window_system_of, window_system_pe)

__all__ = [
    "AffineWalk", "BUFFERS", "BeatFormat", "ChannelPort", "ControlSignature", "Interconnect", "LineBuffer", "Loop", "MASK_SHAPES",
    "OP_ALIASES", "PESystem", "REDUCTIONS", "Reduction", "SmartBuffer", "Unbuffered", "WindowBuffer",
    "WindowFilter", "WindowTraffic", "beat_bytes", "channels_for", "dilation", "erosion", "frame_elements", "pe_members", "reduction",
    "structuring_element", "system_addr_width", "window_system", "window_system_of",
    "window_system_pe",
]
