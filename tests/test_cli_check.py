"""`mmalint check` report options through a real subprocess: exit codes, --output-file,
--exit-zero, --statistics, stdin, and `mmalint rules`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import run_cli

# The findings below are those of jax 0.12, whatever jax is installed.
TARGET = ("--target-jax", "0.12")


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(k.MGPU_INT8_F32_ACC)
    (tmp_path / "b.py").write_text(k.PALLAS_SWAPPED)
    (tmp_path / "c.py").write_text(k.PALLAS_CLEAN)
    return tmp_path


def test_installed_command_exit_codes(tmp_path: Path) -> None:
    exe = shutil.which("mmalint", path=str(Path(sys.executable).parent))
    assert exe is not None, "the mmalint console script is not installed next to python"
    _tree(tmp_path)
    clean = subprocess.run([exe, "check", *TARGET, str(tmp_path / "c.py")], capture_output=True, text=True)
    assert clean.returncode == 0 and clean.stdout == "All checks passed!\n"
    found = subprocess.run([exe, "check", *TARGET, str(tmp_path)], capture_output=True, text=True)
    assert found.returncode == 1 and "Found 2 errors." in found.stdout
    missing = subprocess.run([exe, "check", *TARGET, str(tmp_path / "nope.py")], capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad = subprocess.run([exe, "check", *TARGET, "--select", "XYZ", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_exit_zero_keeps_the_report_but_not_input_errors(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = run_cli("check", *TARGET, "--exit-zero", str(tmp_path))
    assert result.returncode == 0 and "Found 2 errors." in result.stdout
    assert run_cli("check", *TARGET, "--exit-zero", str(tmp_path / "missing.py")).returncode == 2


def test_output_file_gets_the_report_and_stdout_stays_empty(tmp_path: Path) -> None:
    _tree(tmp_path)
    out = tmp_path / "reports" / "mmalint.json"
    result = run_cli("check", *TARGET, "--format", "json", "--output-file", str(out), str(tmp_path))
    assert result.returncode == 1
    assert result.stdout == ""
    data = json.loads(out.read_text())
    assert [d["code"] for d in data] == ["MMA101", "MMA105"]
    text_out = tmp_path / "report.txt"
    run_cli("check", *TARGET, "--color", "always", "-o", str(text_out), str(tmp_path))
    assert "\x1b[" not in text_out.read_text()  # no colour codes in a file
    assert "Found 2 errors." in text_out.read_text()
    bad = run_cli("check", *TARGET, "-o", str(tmp_path / "a.py" / "x"), str(tmp_path))
    assert bad.returncode == 2 and "--output-file" in bad.stderr


def test_statistics_replace_the_findings(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "d.py").write_text(k.MGPU_HELPER_ACC)
    text = run_cli("check", *TARGET, "--statistics", str(tmp_path))
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines == [
        "    2\tMMA101 \t[-] integer-operands-need-int32-accumulator",
        "    1\tMMA105 \t[*] accumulator-passed-last",
    ]
    data = json.loads(run_cli("check", *TARGET, "--statistics", "--format", "json", str(tmp_path)).stdout)
    assert data == [
        {"code": "MMA101", "name": "integer-operands-need-int32-accumulator", "count": 2, "fixable": 1},
        {"code": "MMA105", "name": "accumulator-passed-last", "count": 1, "fixable": 1},
    ]


def test_stdin_with_a_filename() -> None:
    result = run_cli("check", *TARGET, "--format", "concise", "--stdin-filename", "k/kernel.py", "-",
                     stdin=k.PALLAS_SWAPPED.encode())
    assert result.returncode == 1
    assert result.stdout.startswith("k/kernel.py:14:16: MMA105 [*] ")


def test_rules_fix_column_is_truthful() -> None:
    data = json.loads(run_cli("rules", "--format", "json").stdout)
    fixable = {r["code"]: r["fixable"] for r in data}
    assert fixable["MMA101"] and fixable["MMA105"] and fixable["MMA001"]
    assert not fixable["MMA103"] and not fixable["MMA104"]
    assert next(r for r in data if r["code"] == "MMA103")["fix"] is None
    table = run_cli("rules").stdout
    row = next(line for line in table.splitlines() if line.startswith("MMA103"))
    assert " yes " not in row


def test_configuration_is_read_and_force_exclude_applies_it(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mmalint]\nignore = ["MMA105"]\nextend-exclude = ["a.py"]\ntarget-jax = "0.12"\n'
    )
    configured = run_cli("check", "--format", "concise", ".", cwd=tmp_path)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    named = run_cli("check", "--format", "concise", "a.py", "b.py", cwd=tmp_path)
    assert [line.split(":")[0] for line in named.stdout.splitlines()[:1]] == ["a.py"]
    forced = run_cli("check", "--force-exclude", "a.py", "b.py", cwd=tmp_path)
    assert forced.returncode == 0, forced.stdout
    isolated = run_cli("check", *TARGET, "--isolated", "--format", "concise", ".", cwd=tmp_path)
    assert isolated.returncode == 1 and "MMA105" in isolated.stdout and "MMA101" in isolated.stdout


def test_check_confirm_prints_progress_and_a_line_per_finding(tmp_path: Path) -> None:
    from mmalint.confirm.runner import gpu_present

    if gpu_present() is None:
        pytest.skip("this machine may have a GPU: the gpu tier would run for real")
    (tmp_path / "b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--format", "json", "--confirm", "--confirm-tier", "gpu", "b.py", cwd=tmp_path)
    assert [d["code"] for d in json.loads(result.stdout)] == ["MMA105"]  # stdout stays one JSON document
    lines = result.stderr.splitlines()
    assert lines[0].startswith("confirm [1/1] b.py:14:16: MMA105 inconclusive (")
    assert lines[1].startswith("b.py:14:16: MMA105 inconclusive (gpu: inconclusive) gpu: no GPU")
    assert lines[2] == "1 finding: 0 confirmed, 1 inconclusive in every tier"


# ---------------------------------------------------------------------- the forked runs


FORKED_VERSUS_NEW = {
    "findings, json": (("check", *TARGET, "--format", "json", "a.py", "b.py", "c.py"), None, {}),
    "findings, concise": (("check", *TARGET, "--format", "concise", "."), None, {}),
    "stdin": (("check", *TARGET, "--stdin-filename", "k.py", "-"), k.PALLAS_SWAPPED.encode(), {}),
    "usage error": (("check", "--target-jax", "abc", "a.py"), None, {}),
    "environment": (("check", *TARGET, "b.py"), None, {"MMALINT_OUTPUT_FORMAT": "json"}),
    "another command": (("rules",), None, {}),
    "a new interpreter's variable": (("check", *TARGET, "a.py"), None, {"PYTHONWARNINGS": "error"}),
}


@pytest.mark.parametrize(("args", "stdin", "extra"), FORKED_VERSUS_NEW.values(), ids=list(FORKED_VERSUS_NEW))
def test_a_forked_run_is_what_a_new_interpreter_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], stdin: bytes | None, extra: dict[str, str]
) -> None:
    """`run_cli` forks most runs from a server that has imported mmalint (`_mmalint_cli.py`):
    the exit status, output and error are those of `python -m mmalint` started afresh."""
    import _mmalint_cli

    _tree(tmp_path)
    env = {**os.environ, **extra}
    forked = run_cli(*args, stdin=stdin, cwd=tmp_path, env=env)
    if "PYTHONWARNINGS" not in extra:
        assert _mmalint_cli._server is not None, "the run was not forked"
    monkeypatch.setenv("MMALINT_TESTS_SUBPROCESS", "1")
    fresh = run_cli(*args, stdin=stdin, cwd=tmp_path, env=env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.args == fresh.args
