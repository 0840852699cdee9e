"""What `mmalint` says and refuses, through the real command in a subprocess: the summary's
wording, a missing path, --statistics formats, colour from the environment, unknown options,
help texts, and the fix safety `mmalint rules` shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import run_cli

from mmalint.catalog import load_catalog
from mmalint.cli import build_parser
from mmalint.fixes.applicability import SAFE, UNSAFE, fix_applicability
from mmalint.pipeline.file import LintOptions, lint_text
from mmalint.settings import Settings

TARGET = ("--target-jax", "0.12")
COLOR_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "MMALINT_OUTPUT_FORMAT")
BASE_ENV = {key: value for key, value in os.environ.items() if key not in COLOR_VARIABLES}


def test_summary_wording(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(k.MGPU_INT8_F32_ACC)
    (tmp_path / "c.py").write_text(k.MGPU_HELPER_ACC)
    (tmp_path / "e.py").write_text(k.PALLAS_ACC_VARIABLE)
    both = run_cli("check", *TARGET, ".", cwd=tmp_path)
    assert both.stdout.endswith(
        "Found 3 errors.\n"
        "[*] 1 fixable with the `--fix` option (2 hidden fixes can be enabled with the `--unsafe-fixes` option).\n"
    )
    (tmp_path / "a.py").unlink()
    hidden = run_cli("check", *TARGET, "c.py", cwd=tmp_path)
    assert hidden.stdout.endswith(
        "Found 1 error.\nNo fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    )
    for result in (both, hidden):
        assert "option. (" not in result.stdout and "fixs" not in result.stdout


def test_a_missing_path_prints_only_the_error(tmp_path: Path) -> None:
    result = run_cli("check", *TARGET, "nope.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "mmalint: error: nope.py: no such file or directory\n"


@pytest.mark.parametrize("version", ["0.9", "1.0"])
def test_target_jax_outside_the_catalog_is_refused(tmp_path: Path, version: str) -> None:
    (tmp_path / "b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", "--target-jax", version, "b.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"mmalint: error: --target-jax: mmalint does not know jax {version}")


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_statistics_refuses_formats_with_no_place_for_them(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--statistics", "--format", fmt, "b.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"mmalint: error: --statistics prints text or json, not --format {fmt}\n"


@pytest.mark.parametrize(("env", "flags", "colored"), [
    ({}, (), False),
    ({"FORCE_COLOR": "1"}, (), True),
    ({"CLICOLOR_FORCE": "1"}, (), True),
    ({"CLICOLOR_FORCE": "0"}, (), False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, (), False),
    ({"FORCE_COLOR": "1"}, ("--color", "never"), False),
    ({"NO_COLOR": "1"}, ("--color", "always"), True),
])
def test_color_follows_the_environment_and_color_overrides_it(
    tmp_path: Path, env: dict[str, str], flags: tuple[str, ...], colored: bool
) -> None:
    (tmp_path / "b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, *flags, "b.py", cwd=tmp_path, env={**BASE_ENV, **env})
    assert ("\x1b[" in result.stdout) == colored
    rules = run_cli("rules", *flags, env={**BASE_ENV, **env})
    assert ("\x1b[" in rules.stdout) == colored


@pytest.mark.parametrize(("command", "usage"), [
    (("check", "--bogus", "."), "usage: mmalint check "),
    (("rules", "--bogus"), "usage: mmalint rules "),
    (("rule", "MMA101", "--bogus"), "usage: mmalint rule "),
])
def test_an_unknown_option_shows_the_usage_of_its_command(command: tuple[str, ...], usage: str) -> None:
    result = run_cli(*command)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(usage)
    assert result.stderr.endswith(f"mmalint {command[0]}: error: unrecognized arguments: --bogus\n")


def test_every_option_has_a_help_text() -> None:
    for name in ("rule", "rules"):
        page = run_cli(name, "--help").stdout
        assert "--color {auto,always,never}\n" in page and "FORCE_COLOR" in page
    check = run_cli("check", "--help").stdout
    assert "when to colour the output" in check and "MMALINT_OUTPUT_FORMAT" in check
    # The same, for every option of every command (argparse prints nothing for a missing help).
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert isinstance(commands, dict)
    for name, command in commands.items():
        for action in command._actions:
            assert action.help, f"`mmalint {name} {'/'.join(action.option_strings) or action.dest}` has no help"


def test_rules_show_how_safe_each_fix_is() -> None:
    table = run_cli("rules", env=BASE_ENV).stdout.splitlines()
    assert table[0].split()[:5] == ["code", "name", "severity", "fix", "summary"]
    fix_column = {line.split()[0]: line.split()[3] for line in table[1:] if line.startswith("MMA")}
    assert fix_column["MMA105"] == "safe" and fix_column["MMA001"] == "safe"
    assert fix_column["MMA204"] == "unsafe"
    assert fix_column["MMA101"] == "sometimes"
    assert fix_column["MMA103"] not in ("safe", "unsafe", "sometimes")  # no fix: the summary's first word
    data = {r["code"]: r for r in json.loads(run_cli("rules", "--format", "json").stdout)}
    assert data["MMA204"]["fix_applicability"] == "unsafe" and data["MMA103"]["fix_applicability"] is None


def test_rule_fix_safety_agrees_with_the_fixes_of_its_examples() -> None:
    """A rule listed as always safe (or always unsafe) never offers a fix of the other kind."""
    catalog = load_catalog()
    seen: dict[str, set[str]] = {}
    for code, rule in catalog.rules.items():
        for i, example in enumerate(rule.examples):
            if example.kind != "invalid":
                continue
            version = example.versions[-1] if example.versions else catalog.versions[-1]
            settings = Settings(target_jax=version, **dict(example.settings))  # type: ignore[arg-type]
            report = lint_text(f"{code}_{i}.py", example.code, settings, LintOptions(**dict(example.options)))
            for d in report.diagnostics:
                if d.code is not None and d.fix is not None:
                    seen.setdefault(d.code, set()).add(d.fix.applicability)
    for code, kinds in seen.items():
        stated = fix_applicability(catalog.rules[code])
        assert stated is not None, f"{code} offers fixes but the catalog says it has none"
        if stated in (SAFE, UNSAFE):
            assert kinds == {stated}, f"{code} is listed as {stated} but its examples offer {kinds}"
    assert {"MMA105", "MMA204"} <= set(seen)
