"""`--fix` never loses work: it writes a file only if it is still what was read, only where the
user may write, keeps owner, group, mode, links, and leaves no half-written or temporary file
behind, whatever kills it (`mmalint/fixes/write.py`)."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import REPO, run_cli

from mmalint.fixes import write
from mmalint.fixes.write import (
    CHANGED,
    DELETED,
    NotWritten,
    Snapshot,
    refusal,
    remove_stale_temps,
    write_fixed,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file semantics")

TARGET = ("--target-jax", "0.12")

# MMA105 with a safe fix: the accumulator is passed last (the fix moves it first).
SWAPPED = k.PALLAS_SWAPPED
FIXED = SWAPPED.replace("      a,\n      b,\n      acc,\n", "      acc,\n      a,\n      b,\n")
EDITED = SWAPPED + "# saved by an editor while mmalint was running\n"


def _temps(directory: Path) -> list[str]:
    """Hidden temporary files, whoever's naming scheme made them."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


def _file(tmp_path: Path, name: str = "k.py", text: str = SWAPPED) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ the write itself, in process


def test_a_file_changed_after_it_was_read_is_not_written(tmp_path: Path) -> None:
    path = _file(tmp_path)
    read, seen = path.read_bytes(), write.snapshot(path)
    path.write_text(EDITED)
    with pytest.raises(NotWritten) as info:
        write_fixed(path, read, FIXED.encode(), seen)
    assert info.value.reason == CHANGED
    assert path.read_text() == EDITED and _temps(tmp_path) == []


def test_the_content_is_compared_even_when_the_stat_looks_the_same(tmp_path: Path) -> None:
    """Same size, mtime put back: only the bytes tell."""
    path = _file(tmp_path)
    read, before = path.read_bytes(), path.stat()
    same_size = SWAPPED.replace("M, N, K = 128", "M, N, K = 256")
    path.write_text(same_size)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert Snapshot.of(path.stat()) == Snapshot.of(before)
    with pytest.raises(NotWritten, match="changed on disk"):
        write_fixed(path, read, FIXED.encode(), Snapshot.of(before))
    assert path.read_text() == same_size


def test_a_touched_file_is_not_written(tmp_path: Path) -> None:
    path = _file(tmp_path)
    read, seen = path.read_bytes(), write.snapshot(path)
    os.utime(path, ns=(0, 10**18))
    with pytest.raises(NotWritten, match="changed on disk"):
        write_fixed(path, read, FIXED.encode(), seen)


def test_a_deleted_file_is_not_recreated(tmp_path: Path) -> None:
    path = _file(tmp_path)
    read, seen = path.read_bytes(), write.snapshot(path)
    path.unlink()
    with pytest.raises(NotWritten) as info:
        write_fixed(path, read, FIXED.encode(), seen)
    assert info.value.reason == DELETED
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path)
    os.chmod(path, 0o444)  # root may still write it: the permission bit is what counts
    with pytest.raises(NotWritten, match="read-only"):
        write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    assert path.read_text() == SWAPPED


def test_refusal_reads_the_owner_and_the_permission_bits() -> None:
    def st(mode: int, uid: int) -> os.stat_result:
        return os.stat_result((mode, 1, 1, 1, uid, 0, 10, 0, 0, 0))

    regular = stat.S_IFREG
    assert refusal(st(regular | 0o644, 1000), 1000) is None
    assert refusal(st(regular | 0o644, 1000), 1001) == "owned by another user (uid 1000); not fixed"
    assert refusal(st(regular | 0o644, 1000), 0) is None  # root keeps the owner on replace
    assert refusal(st(regular | 0o444, 1000), 1000) == "read-only; not fixed"
    assert refusal(st(regular | 0o644, 1000), 1000, access_ok=False) == "read-only; not fixed"
    assert refusal(st(stat.S_IFIFO | 0o644, 1000), 1000) == "not a regular file; not fixed"
    assert refusal(st(regular | 0o644, 1000), None) is None  # no uids (Windows)


def test_owner_group_and_mode_are_kept(tmp_path: Path) -> None:
    path = _file(tmp_path)
    gid = 4321 if os.geteuid() == 0 else os.getegid()  # as root, a group that is not ours
    os.chown(path, os.geteuid(), gid)
    os.chmod(path, 0o2751)  # after chown, which clears the set-group-id bit
    before = path.stat()
    write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    after = path.stat()
    assert path.read_text() == FIXED
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (before.st_uid, gid, 0o2751)
    assert _temps(tmp_path) == []


def test_a_group_we_cannot_give_means_writing_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the file's group, a new file cannot be given that group: the file itself is
    written instead (it keeps its inode, so its group), and no temporary file is left."""
    path = _file(tmp_path)
    inode = path.stat().st_ino
    monkeypatch.setattr(write, "_take_owner", lambda fd, st: False)
    write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    assert path.read_text() == FIXED and path.stat().st_ino == inode
    assert _temps(tmp_path) == []


def test_a_hard_linked_file_is_written_in_place(tmp_path: Path) -> None:
    path = _file(tmp_path)
    other = tmp_path / "other_name.py"
    os.link(path, other)
    inode = path.stat().st_ino
    write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    assert other.read_text() == FIXED and path.read_text() == FIXED
    shorter = FIXED.replace("\n\nout = kernel", "\nout = kernel")  # the old tail must go
    write_fixed(other, other.read_bytes(), shorter.encode(), write.snapshot(other))
    assert path.read_text() == shorter


def test_a_symlink_stays_a_link_and_its_target_is_written(tmp_path: Path) -> None:
    target = _file(tmp_path, "real.py")
    link = tmp_path / "link.py"
    link.symlink_to(target.name)
    write_fixed(link, link.read_bytes(), FIXED.encode(), write.snapshot(link))
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert target.read_text() == FIXED


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _file(tmp_path)

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    assert path.read_text() == SWAPPED and _temps(tmp_path) == []


def test_stale_temporaries_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # that process has exited (and was reaped)
    stale = tmp_path / write.temp_name("a.py", pid=dead_pid)
    old = tmp_path / write.temp_name("b.py", pid=os.getppid())
    live = tmp_path / write.temp_name("c.py", pid=os.getppid())
    unrelated = tmp_path / ".d.py.tmp"
    for p in (stale, old, live, unrelated):
        p.write_text("partial")
    long_ago = time.time() - write.STALE_AFTER_S - 60
    os.utime(old, (long_ago, long_ago))
    assert sorted(p.name for p in remove_stale_temps(tmp_path)) == sorted([stale.name, old.name])
    assert live.exists() and unrelated.exists()
    # A write in the directory cleans the stale ones on its way.
    stale.write_text("partial")
    path = _file(tmp_path)
    write_fixed(path, path.read_bytes(), FIXED.encode(), write.snapshot(path))
    assert not stale.exists() and live.exists()


_SLOW_WRITE = textwrap.dedent('''\
    import os, signal, sys, time
    from pathlib import Path
    from mmalint.fixes import write

    # Ctrl-C as in a terminal, also where this test runs with SIGINT ignored (a job started in
    # the background by a shell without job control: its children inherit the ignoring).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    path = Path(sys.argv[1])
    def stuck_fsync(fd):  # the disk is slow: the temporary file exists while we wait
        print("writing", flush=True)
        for _ in range(600):  # short sleeps: a signal that came during print is seen at once
            time.sleep(0.1)
    os.fsync = stuck_fsync
    with write.cleanup_on_termination():
        write.write_fixed(path, path.read_bytes(), b"fixed", write.snapshot(path))
''')


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_the_write_removes_the_temporary(tmp_path: Path, signum: int) -> None:
    path = _file(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITE, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        assert len(_temps(tmp_path)) == 1
        child.send_signal(signum)
        child.wait(timeout=30)
    finally:
        child.kill()
    assert child.returncode == -signum  # it still dies of the signal, as the sender expects
    assert _temps(tmp_path) == [] and path.read_text() == SWAPPED


# ------------------------------------------------------------------ the real command


# `mmalint check` whose runner, once it has read and fixed every file, lets the test touch them:
# the editor that saves while mmalint is busy. Only the test's copy of `run` changes.
_MEANWHILE = textwrap.dedent('''\
    import os, sys
    from pathlib import Path
    import mmalint.pipeline.files as runner
    from mmalint.cli import main

    real_run = runner.run
    def run(*args, **kwargs):
        result = real_run(*args, **kwargs)
        Path(os.environ["EDIT"]).write_text(os.environ["EDITED"])
        os.unlink(os.environ["DELETE"])
        return result
    runner.run = run
    sys.exit(main(sys.argv[1:]))
''')


def test_fix_skips_files_edited_or_deleted_while_it_ran(tmp_path: Path) -> None:
    edited, deleted, kept = (_file(tmp_path, name) for name in ("edited.py", "deleted.py", "kept.py"))
    env = {**os.environ, "EDIT": str(edited), "EDITED": EDITED, "DELETE": str(deleted)}
    result = subprocess.run(
        [sys.executable, "-c", _MEANWHILE, "check", *TARGET, "--fix", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=300,
    )
    assert edited.read_text() == EDITED  # the edit survives
    assert not deleted.exists()  # and the deleted file stays deleted
    assert kept.read_text() == FIXED
    assert f"mmalint: warning: {edited}: changed on disk since it was read; not fixed\n" in result.stderr
    assert f"mmalint: warning: {deleted}: deleted since it was read; not fixed\n" in result.stderr
    # What was not written is not fixed: two findings remain, and the exit code says so.
    assert "Found 3 errors (1 fixed, 2 remaining)." in result.stdout
    assert result.returncode == 1, result.stderr


def test_fix_refuses_a_read_only_file(tmp_path: Path) -> None:
    locked, free = _file(tmp_path, "locked.py"), _file(tmp_path, "free.py")
    os.chmod(locked, 0o444)
    result = run_cli("check", *TARGET, "--fix", str(tmp_path))
    assert locked.read_text() == SWAPPED and free.read_text() == FIXED
    assert f"mmalint: warning: {locked}: read-only; not fixed\n" in result.stderr
    assert "Found 2 errors (1 fixed, 1 remaining)." in result.stdout
    assert result.returncode == 1
    assert stat.S_IMODE(locked.stat().st_mode) == 0o444


def test_fix_keeps_hard_links_and_group(tmp_path: Path) -> None:
    linked = _file(tmp_path, "linked.py")
    os.link(linked, tmp_path / "second_name.txt")
    grouped = _file(tmp_path, "grouped.py")
    gid = 4321 if os.geteuid() == 0 else os.getegid()
    os.chown(grouped, os.geteuid(), gid)
    result = run_cli("check", *TARGET, "--fix", str(linked), str(grouped))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "second_name.txt").read_text() == FIXED and linked.stat().st_nlink == 2
    assert grouped.read_text() == FIXED and grouped.stat().st_gid == gid


def _start(directory: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mmalint", "check", *TARGET, "--fix", "-q", str(directory)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO,
    )


def _until_written(child: subprocess.Popen[bytes], path: Path) -> float:
    """Wait until `child` has written `path`; the time then."""
    while child.poll() is None and path.read_text() == SWAPPED:
        time.sleep(0.0002)
    return time.monotonic()


def test_a_kill_during_the_writes_leaves_every_file_whole(tmp_path: Path) -> None:
    """Kill `--fix` at random moments of its writes: each file is the old text or the fixed
    one, SIGTERM leaves no temporary file, and the next run cleans what SIGKILL left."""
    rng = random.Random(13)
    names = [f"k{i:02d}.py" for i in range(24)]
    first = tmp_path / names[0]

    def reset() -> None:
        for name in names:
            (tmp_path / name).write_text(SWAPPED)

    reset()
    calibration = _start(tmp_path)  # files are written in discovery order: how long from first to last?
    started = _until_written(calibration, first)
    writes = _until_written(calibration, tmp_path / names[-1]) - started
    assert calibration.wait(timeout=300) == 0
    hits = 0
    # Six kills at least (three of each signal); more when a loaded machine let the kills land
    # after the last write, until three landed inside the writes.
    for attempt in range(24):
        if attempt >= 6 and hits >= 3:
            break
        reset()
        child = _start(tmp_path)
        try:
            _until_written(child, first)
            time.sleep(rng.uniform(0, writes / 2))
            signum = signal.SIGTERM if attempt % 2 == 0 else signal.SIGKILL
            child.send_signal(signum)
            child.wait(timeout=60)
        finally:
            child.kill()
        texts = [(tmp_path / name).read_text() for name in names]
        assert all(text in (SWAPPED, FIXED) for text in texts), attempt
        hits += SWAPPED in texts  # the kill landed before the last write
        if signum == signal.SIGTERM:
            assert _temps(tmp_path) == [], attempt
            assert child.returncode in (-signal.SIGTERM, 0)
        again = _start(tmp_path)
        assert again.wait(timeout=300) == 0
        assert all((tmp_path / name).read_text() == FIXED for name in names)
        assert _temps(tmp_path) == [], attempt
    assert hits >= 3, writes  # most kills landed inside the writes, or the test proved nothing


def test_the_next_fix_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    """SIGKILL leaves its temporary file; the next `--fix` writing in that directory removes it."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f".k.py.mmalint-{int(dead.stdout)}-0123456789abcdef.tmp"
    left.write_text(SWAPPED[:100])
    path = _file(tmp_path)
    result = run_cli("check", *TARGET, "--fix", str(path))
    assert result.returncode == 0, result.stderr
    assert path.read_text() == FIXED and _temps(tmp_path) == []


# ------------------------------------------------------------------ --fix - (stdin)


def _stdin_fix(data: bytes, *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mmalint", "check", *TARGET, "--fix", *flags, "-"],
        input=data, capture_output=True, cwd=REPO, timeout=300,
    )


def test_fix_stdin_echoes_what_it_cannot_decode() -> None:
    data = b"x = '\xff\xfe'\r\n\x00 not utf-8\n"
    result = _stdin_fix(data)
    assert result.stdout == data
    assert result.returncode == 2
    assert b"mmalint: error: stdin: not valid UTF-8 (byte 0xff on line 1)" in result.stderr


def test_fix_stdin_keeps_the_bytes_of_a_declared_encoding() -> None:
    header = "# -*- coding: latin-1 -*-\n# Größe\n"
    unfixable = (header + "x = 1\r\n").encode("latin-1")
    assert _stdin_fix(unfixable).stdout == unfixable
    fixable = (header + SWAPPED).encode("latin-1")
    result = _stdin_fix(fixable)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (header + FIXED).encode("latin-1")
