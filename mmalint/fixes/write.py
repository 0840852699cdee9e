"""Writing fixed files back: only over what was read, only where the user may write, never half.

`check --fix` reads every file, computes the fixes (on every core), then writes. Meanwhile an
editor may save the file, `git checkout` may replace it, a user may delete it. So each file is
written only if it is still what was read: same inode, size and mtime as when it was read, and
the same bytes, checked again just before the replace. A file that changed, or that is gone, is
left alone (a deleted file is never re-created) and the caller reports it as not fixed. What is
left is the microseconds between that last check and the rename: POSIX has no "replace if
unchanged", and editors do not lock the files they save.

How a file is replaced:
- The new text goes to a temporary file beside it, `.<name>.mmalint-<pid>-<random>.tmp`, which
  is fsynced, given the file's owner, group and mode, and renamed over the file. A kill at any
  point leaves either the old file or the new one, never a half-written one.
- A file with hard links is written in place instead: a rename would give the path a new inode
  and silently cut it from its other names. Its new content goes in with one `pwrite` (then a
  truncate when it got shorter) while SIGTERM, SIGINT and SIGHUP are held off, so only SIGKILL or
  a power cut inside those two system calls could leave it half-written. The same path is taken
  when the file's group cannot be given to a new file (we are not in that group).
- Through a symlink, the target is written; the link stays a link.
- A file without a write permission bit for us is refused: its owner made it read-only, and
  root's right to write anything is no reason for a linter to. So is a file of another user:
  the replacement would be ours, and a fix in someone else's file is theirs to apply.

Temporary files are removed on any exception, Ctrl-C, or SIGTERM/SIGHUP during the writes
(`cleanup_on_termination`). Those that a SIGKILL left behind are removed the next time mmalint
writes in their directory: their process is gone, or they are older than STALE_AFTER_S.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

# A write takes milliseconds; a temporary file this old belongs to no write still running.
STALE_AFTER_S = 600

TEMP_PATTERN = re.compile(r"\A\..+\.mmalint-(?P<pid>\d+)-[0-9a-f]{16}\.tmp\Z")

CHANGED = "changed on disk since it was read; not fixed"
DELETED = "deleted since it was read; not fixed"

_TERMINATIONS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class NotWritten(Exception):
    """The fixes were not written, on purpose: the reason is one line for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Snapshot:
    """What identifies a file's content without reading it: an edit changes one of these."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Snapshot:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def snapshot(path: Path) -> Snapshot | None:
    """The file's snapshot (through a symlink), taken before it is read; None if unreadable."""
    try:
        return Snapshot.of(os.stat(path))
    except OSError:
        return None


def temp_name(name: str, pid: int | None = None) -> str:
    """A temporary name beside `name` that `remove_stale_temps` recognises."""
    return f".{name}.mmalint-{pid if pid is not None else os.getpid()}-{secrets.token_hex(8)}.tmp"


def refusal(st: os.stat_result, euid: int | None, access_ok: bool = True) -> str | None:
    """Why a file with this status may not be written by user `euid` (None: it may).

    `access_ok` is `os.access(path, os.W_OK)`; it is True for root even on a read-only file,
    so the permission bit is checked as well.
    """
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file; not fixed"
    # Another user's file: replacing it would make it ours. Root can hand it back (the new
    # file gets the old owner), so root may fix a checkout it does not own (a CI container).
    if euid is not None and euid != 0 and st.st_uid != euid:
        return f"owned by another user (uid {st.st_uid}); not fixed"
    if not st.st_mode & stat.S_IWUSR or not access_ok:
        return "read-only; not fixed"
    return None


def write_fixed(path: Path, read: bytes, data: bytes, seen: Snapshot | None) -> None:
    """Replace the file at `path` (through a symlink: its target) by `data`, if it still holds
    `read` and, when given, still matches `seen`.

    Raises NotWritten when the file changed, is gone or may not be written; OSError when the
    write itself fails. Either way the file is as it was.
    """
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise NotWritten(DELETED) from None
    if seen is not None and Snapshot.of(st) != seen:
        raise NotWritten(CHANGED)
    geteuid: Callable[[], int] | None = getattr(os, "geteuid", None)
    reason = refusal(st, geteuid() if geteuid else None, os.access(target, os.W_OK))
    if reason is not None:
        raise NotWritten(reason)
    if st.st_nlink > 1:
        _write_in_place(target, read, data, st)
    else:
        _replace(target, read, data, st)


def _unchanged(target: Path, read: bytes, st: os.stat_result) -> None:
    """Raise NotWritten unless `target` is still the file `st` describes and holds `read`."""
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotWritten(DELETED) from None
    except OSError:
        raise NotWritten(CHANGED) from None  # e.g. ELOOP: the path became a symlink
    try:
        if Snapshot.of(os.fstat(fd)) != Snapshot.of(st) or _read_all(fd) != read:
            raise NotWritten(CHANGED)
    finally:
        os.close(fd)
    try:
        now = os.lstat(target)
    except FileNotFoundError:
        raise NotWritten(DELETED) from None
    if Snapshot.of(now) != Snapshot.of(st):
        raise NotWritten(CHANGED)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    view = memoryview(data)
    done = 0
    while done < len(view):
        if offset is None:
            done += os.write(fd, view[done:])
        else:
            done += os.pwrite(fd, view[done:], offset + done)


def _replace(target: Path, read: bytes, data: bytes, st: os.stat_result) -> None:
    directory = target.parent
    remove_stale_temps(directory)
    tmp = directory / temp_name(target.name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        # The name is chosen before the file exists, so whatever interrupts us from here on
        # (an exception, Ctrl-C, SIGTERM raised by cleanup_on_termination) knows what to remove.
        fd = os.open(tmp, flags, 0o600)
        try:
            same_owner = _take_owner(fd, st)
            if same_owner:
                _write_all(fd, data)
                # After the write, which clears set-id bits, and after chown, which does too.
                if hasattr(os, "fchmod"):
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))
                os.fsync(fd)
        finally:
            os.close(fd)
        if same_owner:
            if not hasattr(os, "fchmod"):
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
            _unchanged(target, read, st)
            os.replace(tmp, target)
        else:
            os.unlink(tmp)
    except BaseException as exc:
        if not isinstance(exc, FileExistsError):  # EEXIST from O_EXCL: that file is not ours
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    if not same_owner:
        # A new file cannot get the file's group (we are not in it): write the file itself.
        _write_in_place(target, read, data, st)
    # No fsync of the directory: a power cut before the rename reaches the disk leaves the old
    # file, which is whole; another fsync per file would double the cost of the writes.


def _take_owner(fd: int, st: os.stat_result) -> bool:
    """Give the new file the owner and group of the old one; False where we may not."""
    if not hasattr(os, "fchown"):
        return True
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        return False
    return True


def _write_in_place(target: Path, read: bytes, data: bytes, st: os.stat_result) -> None:
    fd = os.open(target, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if Snapshot.of(os.fstat(fd)) != Snapshot.of(st) or _read_all(fd) != read:
            raise NotWritten(CHANGED)
        with _signals_held():
            _write_all(fd, data, offset=0)
            if len(data) < st.st_size:
                os.ftruncate(fd, len(data))
            os.fsync(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if pid <= 0 or sys.platform == "win32":
        return True  # os.kill(pid, 0) would end a process on Windows: trust the age alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, and belongs to someone else
    return True


def remove_stale_temps(
    directory: Path, now: float | None = None, alive: Callable[[int], bool] = _pid_alive
) -> list[Path]:
    """Remove the temporary files of earlier writes in `directory` that were killed before
    they could clean up: their process is gone, or they are older than STALE_AFTER_S."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = TEMP_PATTERN.match(entry.name)
        if match is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if alive(int(match["pid"])) and now - st.st_mtime < STALE_AFTER_S:
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


class _Terminated(BaseException):
    """A termination signal, raised so that the `except`/`finally` blocks of a write run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def cleanup_on_termination() -> Iterator[None]:
    """While writing: SIGTERM and SIGHUP unwind the write like Ctrl-C does (its temporary file
    is removed), then the process ends of that same signal, as the sender expects."""
    if threading.current_thread() is not threading.main_thread() or not _TERMINATIONS:
        yield
        return

    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        for sig in list(previous):
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut the cleanup short
        raise _Terminated(signum)

    for sig in _TERMINATIONS:
        # A signal the parent set to be ignored (`nohup` does so for SIGHUP) stays ignored.
        if signal.getsignal(sig) is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    except _Terminated as exc:
        for sig, old in previous.items():
            signal.signal(sig, old)
        sys.stdout.flush()
        signal.raise_signal(exc.signum)
        raise SystemExit(128 + exc.signum) from None  # the sender's handler did not end us
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold off the signals that would interrupt an in-place write between its system calls."""
    held = {signal.SIGINT, *_TERMINATIONS}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
