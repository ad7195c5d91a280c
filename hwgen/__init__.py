"""hwgen: generate instrumented FPGA accelerators with Amaranth HDL and measure them."""

from importlib.metadata import PackageNotFoundError, version as _version

from .errors import HwgenError

try:
    __version__ = _version("hwgen")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["HwgenError", "__version__"]
