"""Writing files so that no file is ever lost or half-written."""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename over it, keeping its permissions."""
    directory = path.parent if str(path.parent) else Path(".")
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_replacing(target: Path, data: bytes) -> None:
    """Write whole or not at all, for files a later run reads (the result cache's): a
    temporary file beside `target` (its directories made), then `os.replace`, so that a
    reader sees the old file or the new one; with the permissions any file the user creates
    gets. No fsync: a file lost to a crash is only a miss."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666 & ~_umask())  # not mkstemp's 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
