"""Reading what the user pointed mmalint at: regular files only, and never too much of one.

A checked tree may hold anything: a FIFO named `x.py` (opening it for reading waits for a
writer forever), a symlink to `/dev/zero` (reading never ends), a symlink loop, a file
that grew to gigabytes. Every path is opened without blocking, inspected on the open
descriptor (so a swap between look and read cannot fool it) and read up to a cap; each
problem is an `UnreadableInput` with a one-line reason for that path.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# Far above any real kernel module (jax's largest test file is ~0.5 MB, a generated
# 200k-line function ~10 MB), far below what would hurt the machine.
MAX_FILE_BYTES = 64 * 1024 * 1024


class UnreadableInput(Exception):
    """A path mmalint will not or cannot read; `str()` says why, for a person."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def describe_os_error(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop"
    if exc.errno == errno.ENOENT:
        return "no such file (a dangling symlink?)"
    return exc.strerror or str(exc)


def read_regular(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed), or UnreadableInput."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnreadableInput(describe_os_error(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableInput(f"{kind_of(info.st_mode)}, not a regular file; not read")
        if info.st_size > limit:
            raise UnreadableInput(f"{info.st_size} bytes, over the {limit >> 20} MiB limit; not read")
        chunks: list[bytes] = []
        size = 0
        while True:  # the file may grow while it is read: never past the cap
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise UnreadableInput(f"over the {limit >> 20} MiB limit; not read")
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableInput(describe_os_error(exc)) from None
    finally:
        os.close(fd)


class RealPaths:
    """`os.path.realpath` of many files, each directory resolved once: a file that is not itself
    a symlink is the entry of its name in its directory's real path. (`realpath` looks at every
    component of every path: 4,000 calls were 0.12 s of a 0.5 s check served from the cache.)"""

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, path: Path | str, is_link: bool | None = None) -> str:
        """The real path of `path`; `is_link`, when the caller knows it (a directory entry)."""
        text = os.fspath(path)
        head, name = os.path.split(text)
        if name in ("", ".", ".."):
            return os.path.realpath(text)
        if is_link is None:
            try:
                is_link = stat.S_ISLNK(os.lstat(text).st_mode)
            except (OSError, ValueError):
                is_link = True  # realpath says what it makes of it
        if is_link:
            return os.path.realpath(text)
        real = self._dirs.get(head)
        if real is None:
            real = self._dirs[head] = os.path.realpath(head or os.curdir)
        return os.path.join(real, name)


def regular_file_problem(path: Path) -> str | None:
    """Why `path` (symlinks followed) is not a regular file mmalint can read, or None."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return describe_os_error(exc)
    if not stat.S_ISREG(info.st_mode):
        return f"{kind_of(info.st_mode)}, not a regular file"
    return None
