"""Files a command writes: checked before the work starts, written all at once after it.

Every output option treats its path alike: missing folders on the way are made (only when the
files are written, so a command that fails leaves none behind), an existing folder is not taken
for a file or the other way round, and a failure leaves no file half-written.
"""

import os
import sys
import tempfile
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

from ..errors import HwgenError

__all__ = ["STDOUT", "check_file_option", "check_folder_option", "staged_file", "summary_aside",
           "write_files"]

#: The path that means standard output (``--json -``), as the convention of Unix tools.
STDOUT = Path("-")

#: Where ``-`` writes to while a command's summary goes to standard error.
_standard_output = []


@contextmanager
def summary_aside():
    """While a command writes an output to standard output (``--json -``): what it prints for
    people goes to standard error, so that standard output holds that output only."""
    _standard_output.append(sys.stdout)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        _standard_output.pop()


def _check_ancestors(option, target):
    """The nearest existing folder above ``target`` must be a writable folder."""
    for parent in target.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise HwgenError(f"{option}: {str(parent)!r} is not a folder, so "
                                 f"{str(target)!r} cannot be made")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise HwgenError(f"{option}: cannot write into {str(parent)!r} (permission "
                                 f"denied)")
            return


def check_file_option(option, path):
    """Raise HwgenError unless a file can be written at ``path`` (folders on the way are made
    when it is written)."""
    if path is None or option == "--json" and Path(path) == STDOUT:
        return
    if Path(path) == STDOUT:
        raise HwgenError(f"{option} writes a file: give its name (- for standard output is "
                         f"--json's)")
    target = Path(path)
    if target.is_dir():
        raise HwgenError(f"{option}: {str(path)!r} is a folder, not a file; end it in / to "
                         f"write a file into it")
    _check_ancestors(option, target)


def check_folder_option(option, path):
    """Raise HwgenError unless ``path`` is a folder or can be made one."""
    if path is None:
        return
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            raise HwgenError(f"{option}: {str(path)!r} exists and is not a folder")
        return
    _check_ancestors(option, target)


def _make_folders(folder):
    """Make ``folder`` and its missing parents; returns the folders made, deepest first."""
    made = []
    for parent in [folder, *folder.parents]:
        if parent.exists():
            break
        made.append(parent)
    for parent in reversed(made):
        parent.mkdir()
    return made


def _remove_folders(made):
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            return   # something else put a file there


def _publish(temporary):
    """Give a file made by ``mkstemp`` (private) the permissions of an ordinary output."""
    umask = os.umask(0)
    os.umask(umask)
    temporary.chmod(0o666 & ~umask)


def write_files(files):
    """Write ``{path: text or bytes}``: every file goes to a temporary name next to it first and
    all are renamed into place only when every one was written, so a failure leaves none
    half-written (and no folder made for them). :data:`STDOUT` is written to standard output
    once the files are in place."""
    files = {Path(path): content for path, content in files.items()}
    standard = files.pop(STDOUT, None)
    staged, made = [], []
    try:
        for path, content in files.items():
            made += _make_folders(path.parent)
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            staged.append((Path(temporary), path))
            with os.fdopen(handle, "wb" if isinstance(content, bytes) else "w") as stream:
                stream.write(content)
            _publish(Path(temporary))
        for temporary, path in staged:
            temporary.replace(path)
        staged, made = [], []
    except OSError as error:
        raise HwgenError(f"cannot write {error.filename!r} ({error.strerror})") from None
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        _remove_folders(made)
    if standard is not None:
        stream = _standard_output[-1] if _standard_output else sys.stdout
        stream.write(standard if isinstance(standard, str) else standard.decode())
        stream.flush()


@contextmanager
def staged_file(path):
    """For a file a tool writes while the work runs (a waveform): yields the name of a temporary
    file next to ``path`` (its folders made) and renames it into place only when the work succeeds; on any
    failure, an interrupt included, removes it and the folders made for it. ``None`` yields
    ``None``."""
    if path is None:
        yield None
        return
    path = Path(path)
    made = []
    try:
        made = _make_folders(path.parent)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(handle)
    except OSError as error:
        _remove_folders(made)
        raise HwgenError(f"cannot write {error.filename!r} ({error.strerror})") from None
    temporary = Path(temporary)
    try:
        yield str(temporary)
        _publish(temporary)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        _remove_folders(made)
        raise
