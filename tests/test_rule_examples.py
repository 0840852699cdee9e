"""Every example in rules/*.toml is a test: invalid ones report exactly their codes, on the lines
they mark, and their fix rewrites them as their `fix_diff` says; valid ones report nothing.

An invalid example marks each line a finding is reported on, as ruff's mdtests do:
`mma(acc, a, b)  # error: [MMA101]` (the severity, then the codes). The markers are stripped
before the example is checked, so the checked text is the example as a reader copies it.
`fix_diff` is what `mmalint check --fix --unsafe-fixes` changes in it, as a unified diff
without context or file header; an invalid example without one is left as it is.
"""

from __future__ import annotations

import difflib

import pytest

from mmalint.catalog import Example, load_catalog, split_markers
from mmalint.engine import check_text
from mmalint.fixes.fixer import fix_text
from mmalint.pipeline.file import LintOptions, lint_text
from mmalint.settings import Settings

CATALOG = load_catalog()
CASES = [
    pytest.param(rule.code, i, example, version, id=f"{rule.code}-{example.kind}-{i}-jax{version}")
    for rule in CATALOG.rules.values()
    for i, example in enumerate(rule.examples)
    for version in CATALOG.versions
    if not example.versions or version in example.versions
]

def _diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return "".join(f"{line}\n" for line in list(lines)[2:])  # no `---`/`+++` header


@pytest.mark.parametrize(("code", "index", "example", "version"), CASES)
def test_example(code: str, index: int, example: Example, version: str) -> None:
    filename = f"{code}_{index}.py"
    text, marked = example.code, list(example.marked)
    settings = Settings(target_jax=version, **dict(example.settings))  # type: ignore[arg-type]
    options = LintOptions(**dict(example.options))
    if example.options or "noqa" in text:
        # Flags (`options`) and suppressions live after the engine: check as the CLI does.
        report = lint_text(filename, text, settings, options)
    else:
        report = check_text(filename, text, settings)
    got = sorted(d.code or d.name for d in report.diagnostics)
    expected = sorted(example.expect)
    assert got == expected, [d.message for d in report.diagnostics]
    reported = sorted((d.range.start.row, d.code or d.name, d.severity) for d in report.diagnostics)
    assert reported == marked, "the lines reported (row, code, severity) are not the lines marked"
    # An example must be one the analysis fully understands, or it proves nothing; one whose
    # operand dtype is unknown on purpose must be reported without a prediction.
    assert report.calls >= 1
    if example.operands_known:
        assert report.known_calls >= 1
    else:
        assert report.known_calls == 0
        assert all(d.predicted_error is None and d.unpredicted for d in report.diagnostics)
    if example.kind == "invalid":
        fixed = fix_text(filename, text, settings, options, unsafe=True)
        assert _diff(text, fixed.text) == example.fix_diff


def test_every_rule_has_invalid_and_valid_examples() -> None:
    for rule in CATALOG.rules.values():
        kinds = {e.kind for e in rule.examples}
        assert kinds == {"invalid", "valid"}, rule.code
        for example in rule.examples:
            assert sorted(c for _, c, _ in example.marked) == sorted(example.expect), (rule.code, example.title)
            if example.kind == "invalid":
                assert rule.code in example.expect


def test_only_fixable_rules_have_fix_diffs() -> None:
    for rule in CATALOG.rules.values():
        for example in rule.examples:
            if example.fix_diff:
                assert rule.fixable and example.kind == "invalid", (rule.code, example.title)


def test_markers_are_stripped_and_read() -> None:
    text, marked = split_markers("a = 1\nmma(acc, a, b)  # noqa: X  # error: [MMA101] [MMA201]\n")
    assert text == "a = 1\nmma(acc, a, b)  # noqa: X\n"
    assert marked == ((2, "MMA101", "error"), (2, "MMA201", "error"))


def test_every_check_names_a_rule_and_a_known_version() -> None:
    for check in CATALOG.checks:
        assert check.rule in CATALOG.rules
        assert set(check.versions) <= set(CATALOG.versions)
        if check.raises:
            assert check.message, check.id
