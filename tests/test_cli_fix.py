"""`mmalint check --fix / --unsafe-fixes / --diff`, run as a user runs them (a subprocess)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import run_cli

# The findings below are those of jax 0.12, whatever jax is installed.
TARGET = ("--target-jax", "0.12")


def _write(tmp_path: Path, name: str, text: str, newline: str = "\n", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode(encoding))
    return path


def test_fix_writes_the_safe_fix_and_exits_clean(tmp_path: Path) -> None:
    path = _write(tmp_path, "kernel.py", k.MGPU_INT8_F32_ACC)
    before = run_cli("check", *TARGET, str(path))
    assert before.returncode == 1
    assert "[*] 1 fixable with the `--fix` option." in before.stdout
    fixed = run_cli("check", *TARGET, "--fix", str(path))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Found 1 error (1 fixed, 0 remaining)." in fixed.stdout
    assert path.read_text() == k.MGPU_INT8_F32_ACC_FIXED
    again = run_cli("check", *TARGET, "--fix", str(path))
    assert again.returncode == 0 and "All checks passed!" in again.stdout
    assert path.read_text() == k.MGPU_INT8_F32_ACC_FIXED


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    path = _write(tmp_path, "kernel.py", k.MGPU_HELPER_ACC)
    report = run_cli("check", *TARGET, str(path))
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in report.stdout
    safe_only = run_cli("check", *TARGET, "--fix", str(path))
    assert safe_only.returncode == 1 and path.read_text() == k.MGPU_HELPER_ACC
    unsafe = run_cli("check", *TARGET, "--fix", "--unsafe-fixes", str(path))
    assert unsafe.returncode == 0, unsafe.stdout
    assert "ir.IntegerType.get_signless(32)" in path.read_text()


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    path = _write(tmp_path, "kernel.py", k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--diff", str(path))
    assert result.returncode == 1
    assert path.read_text() == k.PALLAS_SWAPPED
    assert result.stdout.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert "   o_ref[...] = plgpu.mma(\n+      acc,\n       a,\n       b,\n-      acc,\n" in result.stdout
    assert "Would fix 1 error." in result.stderr
    clean = _write(tmp_path, "clean.py", k.PALLAS_CLEAN)
    nothing = run_cli("check", *TARGET, "--diff", str(clean))
    assert nothing.returncode == 0 and nothing.stdout == ""


def test_fix_from_stdin_prints_the_fixed_source(tmp_path: Path) -> None:
    result = run_cli("check", *TARGET, "--fix", "-", stdin=k.PALLAS_SWAPPED.encode())
    assert result.returncode == 0, result.stderr
    assert result.stdout == k.PALLAS_CLEAN
    unfixable = run_cli("check", *TARGET, "--fix", "--stdin-filename", "s.py", "-",
                        stdin=k.PALLAS_SWEEP_SHARED_CONSTANT.encode())
    assert unfixable.returncode == 1
    assert unfixable.stdout == k.PALLAS_SWEEP_SHARED_CONSTANT
    assert "s.py:16:" in unfixable.stderr and "MMA101" in unfixable.stderr


def test_fix_keeps_crlf_bom_cookie_and_permissions(tmp_path: Path) -> None:
    crlf = _write(tmp_path, "crlf.py", k.MGPU_INT8_F32_ACC, newline="\r\n")
    os.chmod(crlf, 0o751)
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + k.PALLAS_SWAPPED.encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# Größe\n" + k.PALLAS_SWAPPED).encode("latin-1"))
    result = run_cli("check", *TARGET, "--fix", str(crlf), str(bom), str(latin))
    assert result.returncode == 0, result.stdout + result.stderr
    assert crlf.read_bytes() == k.MGPU_INT8_F32_ACC_FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o751
    assert bom.read_bytes() == b"\xef\xbb\xbf" + k.PALLAS_CLEAN.encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# Größe\n" + k.PALLAS_CLEAN).encode("latin-1")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_fix_writes_through_a_symlink(tmp_path: Path) -> None:
    target = _write(tmp_path, "real.py", k.PALLAS_SWAPPED)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert run_cli("check", *TARGET, "--fix", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text() == k.PALLAS_CLEAN


def test_exit_non_zero_on_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, "kernel.py", k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--fix", "--exit-non-zero-on-fix", str(path))
    assert result.returncode == 1 and path.read_text() == k.PALLAS_CLEAN
    assert run_cli("check", *TARGET, "--exit-non-zero-on-fix", str(path)).returncode == 2


def test_fixable_count_is_what_fix_fixes(tmp_path: Path) -> None:
    """The summary's `[*] N fixable` must be exactly what `--fix` then fixes."""
    files = {
        "a.py": k.MGPU_INT8_F32_ACC,
        "b.py": k.PALLAS_SWAPPED,
        "c.py": k.MGPU_HELPER_ACC,
        "d.py": k.PALLAS_SWEEP_SHARED_CONSTANT,
        "e.py": k.PALLAS_ACC_VARIABLE,
    }
    for name, text in files.items():
        _write(tmp_path, name, text)
    hidden_note = " (2 hidden fixes can be enabled with the `--unsafe-fixes` option)"
    for flags, fixable, note in (((), 2, hidden_note), (("--unsafe-fixes",), 4, "")):
        for name, text in files.items():
            _write(tmp_path, name, text)
        report = run_cli("check", *TARGET, *flags, str(tmp_path))
        assert "Found 5 errors." in report.stdout
        assert f"[*] {fixable} fixable with the `--fix` option{note}.\n" in report.stdout
        fixed = run_cli("check", *TARGET, "--fix", *flags, str(tmp_path))
        assert f"Found 5 errors ({fixable} fixed, {5 - fixable} remaining)." in fixed.stdout
