"""Files a command writes: checked before the work starts, written all at once after it."""

import os
import tempfile
from pathlib import Path

from ..errors import HwgenError

__all__ = ["check_file_option", "check_folder_option", "write_files"]


def check_file_option(option, path):
    """Raise HwgenError unless a file can be written at ``path`` (its folder exists)."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise HwgenError(f"{option}: {str(path)!r} is a folder, not a file")
    if not target.resolve().parent.is_dir():
        raise HwgenError(f"{option}: folder of {str(path)!r} does not exist")


def check_folder_option(option, path):
    """Raise HwgenError unless ``path`` is a folder or can be made one (its parent exists)."""
    if path is None:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise HwgenError(f"{option}: {str(path)!r} exists and is not a folder")
    if not target.exists() and not target.resolve().parent.is_dir():
        raise HwgenError(f"{option}: parent folder of {str(path)!r} does not exist")


def write_files(files):
    """Write ``{path: text}``: every file goes to a temporary name next to it first and all are
    renamed into place only when every one was written, so a failure leaves none half-written.
    Missing folders whose parent exists are made."""
    staged = []
    try:
        for path, text in files.items():
            path = Path(path)
            path.parent.mkdir(exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            staged.append((Path(temporary), path))
            with os.fdopen(handle, "w") as stream:
                stream.write(text)
            umask = os.umask(0)
            os.umask(umask)
            Path(temporary).chmod(0o666 & ~umask)   # mkstemp makes it private; outputs are not
        for temporary, path in staged:
            temporary.replace(path)
    except OSError as error:
        raise HwgenError(f"cannot write {error.filename!r} ({error.strerror})") from None
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
