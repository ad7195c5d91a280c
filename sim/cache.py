"""Where hwgen keeps what it can make again: compiled models, synthesis results, sweep tasks.

One folder holds them all: ``$HWGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/hwgen`` (the XDG base
directory convention), else ``~/.cache/hwgen``; each kind of result has a folder of its own
in it. The tools hwgen drives keep caches too (YoWASP's compiled WebAssembly and the wasmtime
under it, matplotlib's font cache): :func:`tool_environment` points them into hwgen's cache
when their own place cannot be written (a read-only home).

This module lives in ``sim`` because the compiled engine needs it and ``sim`` imports nothing
of ``hwgen``; the flow's caches use it from there.
"""

import os
from pathlib import Path

__all__ = ["CacheUnwritable", "cache_root", "cache_dir", "tool_environment"]


class CacheUnwritable(OSError):
    """The cache folder cannot be made or written; the message says which folder and how to
    choose another."""


def _user_cache_home():
    """``$XDG_CACHE_HOME`` when set to an absolute path (the convention ignores relative
    ones), else ``~/.cache``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"


def cache_root():
    """The folder that holds every cache of hwgen (it may not exist yet)."""
    root = os.environ.get("HWGEN_CACHE_DIR")
    return Path(root).expanduser() if root else _user_cache_home() / "hwgen"


def _writable(folder):
    """Make ``folder`` if missing; whether files can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def cache_dir(kind):
    """The folder of one kind of cached result (``"compiled"``, ``"synth"``, ``"sweep"``),
    made if missing.

    Raises
    ------
    CacheUnwritable
        If the folder cannot be made or written.
    """
    folder = cache_root() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        problem = None if os.access(folder, os.W_OK | os.X_OK) else "permission denied"
    except OSError as error:
        problem = error.strerror or type(error).__name__
    if problem is not None:
        hint = ("point HWGEN_CACHE_DIR at a writable folder" if os.environ.get("HWGEN_CACHE_DIR")
                else "set HWGEN_CACHE_DIR (or XDG_CACHE_HOME) to a writable folder")
        raise CacheUnwritable(f"cannot write the cache folder {str(folder)!r} ({problem}): "
                              f"{hint}")
    return folder


def tool_environment():
    """Environment variables to set for the tools hwgen drives so that each keeps its cache
    in a writable place: empty when their own places can be written. Where one cannot,
    YoWASP and wasmtime (``XDG_CACHE_HOME``) and matplotlib (``MPLCONFIGDIR``) get a folder in
    hwgen's cache, if that can be written."""
    env = {}
    if not _writable(_user_cache_home()) and _writable(cache_root() / "tools"):
        # platformdirs (YoWASP's cache) and wasmtime both follow XDG_CACHE_HOME.
        env["XDG_CACHE_HOME"] = str(cache_root() / "tools")
    yowasp = os.environ.get("YOWASP_CACHE_DIR")
    if yowasp and not _writable(Path(yowasp)) and _writable(cache_root() / "tools" / "YoWASP"):
        env["YOWASP_CACHE_DIR"] = str(cache_root() / "tools" / "YoWASP")
    config = os.environ.get("MPLCONFIGDIR")
    if config:
        matplotlib = Path(config)
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        matplotlib = (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".config") / "matplotlib"
    if not _writable(matplotlib) and _writable(cache_root() / "matplotlib"):
        env["MPLCONFIGDIR"] = str(cache_root() / "matplotlib")
    return env
