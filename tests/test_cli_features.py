"""`mmalint check`'s ruff-like features, each through the real command in a subprocess: stdin by
name, --add-noqa, --show-fixes, --fix-only, --ignore-noqa, --show-files, --watch, `extend`,
`unsafe-fixes`, `fixable`/`unfixable`, and $MMALINT_OUTPUT_FORMAT."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import _kernels as k
from _mmalint_cli import run_cli

# The findings below are those of jax 0.12, whatever jax is installed.
TARGET = ("--target-jax", "0.12")
CLEAN_ENV = {key: value for key, value in os.environ.items() if not key.startswith("MMALINT_")}


def _write(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


# ---------------------------------------------------------------- stdin (item 5)


def test_stdin_filename_alone_reads_stdin() -> None:
    result = run_cli("check", *TARGET, "--format", "concise", "--stdin-filename", "k/kernel.py",
                     stdin=k.PALLAS_SWAPPED.encode())
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("k/kernel.py:14:16: MMA105 [*] ")
    # ruff's rule: with a stdin name, other paths are ignored (and said to be).
    other = run_cli("check", *TARGET, "--format", "concise", "--stdin-filename", "k.py", "tests/",
                    stdin=k.PALLAS_SWAPPED.encode())
    assert other.returncode == 1 and other.stdout.startswith("k.py:14:16: MMA105")
    assert "mmalint: warning: ignoring tests/: --stdin-filename checks standard input" in other.stderr


def test_force_exclude_applies_to_the_stdin_name(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[tool.mmalint]\ntarget-jax = "0.12"\nextend-exclude = ["generated/"]\n'})
    source = k.PALLAS_SWAPPED.encode()
    checked = run_cli("check", "--stdin-filename", "generated/k.py", cwd=tmp_path, stdin=source)
    assert checked.returncode == 1 and "MMA105" in checked.stdout
    excluded = run_cli("check", "--force-exclude", "--stdin-filename", "generated/k.py", cwd=tmp_path, stdin=source)
    assert (excluded.returncode, excluded.stdout) == (0, "All checks passed!\n"), excluded.stderr
    fix = run_cli("check", "--fix", "--force-exclude", "--stdin-filename", "generated/k.py", cwd=tmp_path,
                  stdin=source)
    assert (fix.returncode, fix.stdout, fix.stderr) == (0, k.PALLAS_SWAPPED, "")
    kept = run_cli("check", "--fix", "--force-exclude", "--stdin-filename", "src/k.py", cwd=tmp_path, stdin=source)
    assert kept.returncode == 0 and kept.stdout == k.PALLAS_CLEAN


# ---------------------------------------------------------------- --add-noqa

NOQA_KERNEL = k.PALLAS_SWAPPED.replace(
    "  o_ref[...] = plgpu.mma(\n      a,\n      b,\n      acc,\n  )\n",
    '  o_ref[...] = plgpu.mma(a, b, acc)\n'
    '  o_ref[...] = plgpu.mma(a, \\\n      b, acc)\n'
    '  o_ref[...] = plgpu.mma(a, b, acc)  # noqa: E501\n'
    '  o_ref[...] = plgpu.mma(a, b, acc)  # why: a comment\n'
    '  o_ref[...] = (plgpu.mma(a, b, acc), """a string\n""")[0]\n',
)
NOQA_ADDED = NOQA_KERNEL.replace(
    '  o_ref[...] = plgpu.mma(a, b, acc)\n',
    '  o_ref[...] = plgpu.mma(a, b, acc)  # noqa: MMA105\n',
).replace(
    '      b, acc)\n', '      b, acc)  # noqa: MMA105\n',
).replace(
    '  # noqa: E501\n', '  # noqa: E501, MMA105\n',
).replace(
    '  # why: a comment\n', '  # why: a comment  # noqa: MMA105\n',
)


def test_add_noqa_puts_a_directive_where_it_holds(tmp_path: Path) -> None:
    _write(tmp_path, {"k.py": NOQA_KERNEL})
    (tmp_path / "crlf.py").write_bytes(k.PALLAS_SWAPPED.replace("\n", "\r\n").encode())
    before = run_cli("check", *TARGET, "--format", "concise", ".", cwd=tmp_path)
    assert [line.split(": ")[0] for line in before.stdout.splitlines()[:6]] == [
        "crlf.py:14:16", "k.py:14:16", "k.py:15:16", "k.py:17:16", "k.py:18:16", "k.py:19:17",
    ]
    added = run_cli("check", *TARGET, "--add-noqa", ".", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout == ""
    assert added.stderr.splitlines() == [
        "mmalint: warning: k.py:19: no `# noqa: MMA105` added: the line is inside a multi-line string "
        "(add one by hand on a line of the statement outside it)",
        "Added 5 noqa directives.",
    ]
    assert (tmp_path / "k.py").read_text() == NOQA_ADDED
    assert (tmp_path / "crlf.py").read_bytes() == k.PALLAS_SWAPPED.replace(
        "plgpu.mma(\n", "plgpu.mma(  # noqa: MMA105\n").replace("\n", "\r\n").encode()
    after = run_cli("check", *TARGET, "--format", "concise", ".", cwd=tmp_path)
    assert after.returncode == 1 and after.stdout.startswith("k.py:19:17: MMA105 ")
    assert "Found 1 error." in after.stdout
    again = run_cli("check", *TARGET, "--add-noqa", ".", cwd=tmp_path)
    assert again.returncode == 0 and again.stderr.endswith("Added 0 noqa directives.\n")
    assert (tmp_path / "k.py").read_text() == NOQA_ADDED


def test_add_noqa_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    _write(tmp_path, {"k.py": k.PALLAS_SWAPPED})
    for extra in ("--fix", "--diff", "--fix-only", "--watch"):
        result = run_cli("check", *TARGET, "--add-noqa", extra, "k.py", cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr == f"mmalint: error: --add-noqa cannot be combined with {extra}\n"
    stdin = run_cli("check", *TARGET, "--add-noqa", "-", stdin=k.PALLAS_SWAPPED.encode())
    assert stdin.returncode == 2 and "cannot read standard input" in stdin.stderr
    assert (tmp_path / "k.py").read_text() == k.PALLAS_SWAPPED


# ---------------------------------------------------------------- --show-fixes, --fix-only


def test_show_fixes_lists_what_was_fixed_and_shows_each_diff(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": k.MGPU_INT8_F32_ACC, "b.py": k.PALLAS_SWAPPED})
    shown = run_cli("check", *TARGET, "--show-fixes", "b.py", cwd=tmp_path)
    assert shown.returncode == 1
    assert (
        "  = fix (safe): Move the accumulator to the first argument\n"
        "    @@ -14,5 +14,5 @@\n"
        "       o_ref[...] = plgpu.mma(\n"
        "    +      acc,\n"
        "           a,\n"
        "           b,\n"
        "    -      acc,\n"
        "       )\n"
        "\n"
        "Found 1 error.\n"
    ) in shown.stdout
    concise = run_cli("check", *TARGET, "--show-fixes", "--format", "concise", "b.py", cwd=tmp_path)
    assert "@@" not in concise.stdout
    fixed = run_cli("check", *TARGET, "--fix", "--show-fixes", "--format", "concise", ".", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == (
        "\n"
        "Fixed 2 errors:\n"
        "- a.py:\n"
        "    1 × MMA101 (integer-operands-need-int32-accumulator)\n"  # noqa: RUF001 (ruff's sign)
        "- b.py:\n"
        "    1 × MMA105 (accumulator-passed-last)\n"  # noqa: RUF001
        "\n"
        "Found 2 errors (2 fixed, 0 remaining).\n"
    )


def test_fix_only_fixes_and_reports_nothing_else(tmp_path: Path) -> None:
    files = {"a.py": k.MGPU_INT8_F32_ACC, "c.py": k.MGPU_HELPER_ACC}
    _write(tmp_path, files)
    result = run_cli("check", *TARGET, "--fix-only", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fixed 1 error (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    assert (tmp_path / "a.py").read_text() == k.MGPU_INT8_F32_ACC_FIXED
    nothing = run_cli("check", *TARGET, "--fix-only", "--exit-non-zero-on-fix", ".", cwd=tmp_path)
    assert nothing.returncode == 0
    assert nothing.stdout == "No errors fixed (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    _write(tmp_path, files)
    counted = run_cli("check", *TARGET, "--fix-only", "--exit-non-zero-on-fix", ".", cwd=tmp_path)
    assert counted.returncode == 1
    quiet_json = run_cli("check", *TARGET, "--fix-only", "--format", "json", "c.py", cwd=tmp_path)
    assert (quiet_json.returncode, quiet_json.stdout) == (0, "")
    stdin = run_cli("check", *TARGET, "--fix-only", "-", stdin=k.PALLAS_SWAPPED.encode())
    assert (stdin.returncode, stdin.stdout, stdin.stderr) == (0, k.PALLAS_CLEAN, "")


# ---------------------------------------------------------------- --ignore-noqa, --show-files


def test_ignore_noqa_reports_what_directives_hide(tmp_path: Path) -> None:
    _write(tmp_path, {
        "line.py": k.PALLAS_SWAPPED.replace("plgpu.mma(\n", "plgpu.mma(  # noqa: MMA105\n"),
        "file.py": "# mmalint: noqa\n" + k.MGPU_INT8_F32_ACC,
    })
    hidden = run_cli("check", *TARGET, "--report-unused-noqa", ".", cwd=tmp_path)
    assert hidden.returncode == 0, hidden.stdout
    shown = run_cli("check", *TARGET, "--ignore-noqa", "--report-unused-noqa", "--format", "concise", ".",
                    cwd=tmp_path)
    assert shown.returncode == 1
    assert [line.split(" ")[1] for line in shown.stdout.splitlines()[:2]] == ["MMA101", "MMA105"]
    assert "MMA001" not in shown.stdout  # an ignored directive is not an unused one


def test_show_files_prints_what_would_be_checked(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[tool.mmalint]\nextend-exclude = ["vendored/"]\n',
        "a.py": "", "b.pyi": "", "notes.txt": "", "build/gen.py": "", "vendored/v.py": "", "pkg/c.py": "",
    })
    result = run_cli("check", "--show-files", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "a.py\nb.pyi\npkg/c.py\n", "")
    named = run_cli("check", "--show-files", "--force-exclude", "vendored/v.py", "a.py", cwd=tmp_path)
    assert named.stdout == "a.py\n"
    missing = run_cli("check", "--show-files", "a.py", "nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout == "a.py\n"
    assert missing.stderr == "mmalint: error: nope.py: no such file or directory\n"


# ---------------------------------------------------------------- --watch


def test_watch_checks_again_when_a_file_changes(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(k.PALLAS_SWAPPED)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mmalint", "check", *TARGET, "--format", "concise", "--watch", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CLEAN_ENV,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or ()], daemon=True).start()

    def report() -> str:
        """The lines up to the end of the next check."""
        seen = []
        while not seen or "Watching for file changes." not in seen[-1]:
            seen.append(lines.get(timeout=120))
        return "".join(seen)

    try:
        first = report()
        assert "Starting mmalint in watch mode..." in first
        assert "k.py:14:16: MMA105" in first and "Found 1 error." in first
        kernel.write_text(k.PALLAS_CLEAN + "# edited\n")
        second = report()
        assert "File change detected..." in second and "All checks passed!" in second
        (tmp_path / "new.py").write_text(k.PALLAS_SWAPPED)  # a new file is watched too
        third = report()
        assert "new.py:14:16: MMA105" in third
        assert proc.poll() is None  # still watching
    finally:
        proc.terminate()
        proc.wait(timeout=60)


# ---------------------------------------------------------------- configuration


def test_extend_loads_the_base_configuration_first(tmp_path: Path) -> None:
    _write(tmp_path, {
        "base.toml": 'target-jax = "0.12"\nignore = ["MMA105"]\n',
        "sub/pyproject.toml": '[tool.mmalint]\nextend = "../base.toml"\n',
        "sub/a.py": k.MGPU_INT8_F32_ACC,
        "sub/b.py": k.PALLAS_SWAPPED,
    })
    sub = tmp_path / "sub"
    inherited = run_cli("check", "--format", "concise", ".", cwd=sub)
    assert inherited.returncode == 1, inherited.stderr
    assert [line.split(" ")[1] for line in inherited.stdout.splitlines()[:1]] == ["MMA101"]
    assert "MMA105" not in inherited.stdout
    (sub / "pyproject.toml").write_text('[tool.mmalint]\nextend = "../base.toml"\nselect = ["MMA105"]\n')
    overridden = run_cli("check", "--format", "concise", ".", cwd=sub)
    assert [line.split(" ")[1] for line in overridden.stdout.splitlines()[:1]] == ["MMA105"]
    assert "MMA101" not in overridden.stdout
    (tmp_path / "base.toml").write_text('extend = "sub/pyproject.toml"\n')
    cycle = run_cli("check", ".", cwd=sub)
    assert cycle.returncode == 2 and "cycle" in cycle.stderr and "Traceback" not in cycle.stderr
    (sub / "pyproject.toml").write_text('[tool.mmalint]\nextend = "../missing.toml"\n')
    missing = run_cli("check", ".", cwd=sub)
    assert missing.returncode == 2 and "missing.toml" in missing.stderr


def test_unsafe_fixes_from_the_configuration(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[tool.mmalint]\ntarget-jax = "0.12"\nunsafe-fixes = true\n',
                      "c.py": k.MGPU_HELPER_ACC})
    report = run_cli("check", ".", cwd=tmp_path)
    assert "[*] 1 fixable with the `--fix` option.\n" in report.stdout
    refused = run_cli("check", "--no-unsafe-fixes", ".", cwd=tmp_path)
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in refused.stdout
    fixed = run_cli("check", "--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert "ir.IntegerType.get_signless(32)" in (tmp_path / "c.py").read_text()


def test_fixable_and_unfixable_choose_the_rules_that_fix(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": k.MGPU_INT8_F32_ACC, "b.py": k.PALLAS_SWAPPED})
    for config, flags in (
        ('unfixable = ["MMA105"]', ()),
        ('fixable = ["MMA1"]\nunfixable = ["MMA105"]', ()),
        ('fixable = ["MMA101"]', ()),
        ("", ("--unfixable", "MMA105")),
        ('unfixable = ["MMA1"]', ("--unfixable", "MMA105")),  # the command line's list replaces it
    ):
        (tmp_path / "pyproject.toml").write_text(f'[tool.mmalint]\ntarget-jax = "0.12"\n{config}\n')
        report = run_cli("check", *flags, "--format", "concise", ".", cwd=tmp_path)
        assert report.stdout.splitlines()[:2] == [
            "a.py:17:3: MMA101 [*] `mgpu.mma` with int8 operands needs a signed int32 accumulator, but the accumulator is float32",
            "b.py:14:16: MMA105 `plgpu.mma` takes the accumulator first: this call passes the float32 accumulator last, as `b`",
        ], (config, flags, report.stdout)
        assert "[*] 1 fixable with the `--fix` option." in report.stdout
    fixed = run_cli("check", "--fix", "--unfixable", "MMA105", ".", cwd=tmp_path)
    assert fixed.returncode == 1
    assert (tmp_path / "b.py").read_text() == k.PALLAS_SWAPPED
    assert (tmp_path / "a.py").read_text() == k.MGPU_INT8_F32_ACC_FIXED
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nfixable = ["MMA9"]\n')
    bad = run_cli("check", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "fixable" in bad.stderr and "MMA9" in bad.stderr


def test_output_format_from_the_environment(tmp_path: Path) -> None:
    _write(tmp_path, {"b.py": k.PALLAS_SWAPPED})
    env = {**CLEAN_ENV, "MMALINT_OUTPUT_FORMAT": "json"}
    as_json = run_cli("check", *TARGET, "b.py", cwd=tmp_path, env=env)
    assert [d["code"] for d in json.loads(as_json.stdout)] == ["MMA105"]
    flag_wins = run_cli("check", *TARGET, "--format", "concise", "b.py", cwd=tmp_path, env=env)
    assert flag_wins.stdout.startswith("b.py:14:16: MMA105")
    bad = run_cli("check", *TARGET, "b.py", cwd=tmp_path, env={**CLEAN_ENV, "MMALINT_OUTPUT_FORMAT": "xml"})
    assert bad.returncode == 2
    assert bad.stderr == ("mmalint: error: MMALINT_OUTPUT_FORMAT='xml': expected one of full, concise, "
                          "json, sarif, github\n")
