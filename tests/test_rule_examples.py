"""Every example in rules/*.toml is a test: invalid ones report exactly their codes, valid ones nothing."""

from __future__ import annotations

import pytest

from mmalint.catalog import load_catalog
from mmalint.engine import check_text
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


@pytest.mark.parametrize(("code", "index", "example", "version"), CASES)
def test_example(code: str, index: int, example, version: str) -> None:  # type: ignore[no-untyped-def]
    filename = f"{code}_{index}.py"
    settings = Settings(target_jax=version, **dict(example.settings))  # type: ignore[arg-type]
    if example.options or "noqa" in example.code:
        # Flags (`options`) and suppressions live after the engine: check as the CLI does.
        report = lint_text(filename, example.code, settings, LintOptions(**dict(example.options)))
    else:
        report = check_text(filename, example.code, settings)
    got = sorted(d.code or d.name for d in report.diagnostics)
    expected = sorted(example.expect)
    assert got == expected, [d.message for d in report.diagnostics]
    # An example must be one the analysis fully understands, or it proves nothing; one whose
    # operand dtype is unknown on purpose must be reported without a prediction.
    assert report.calls >= 1
    if example.operands_known:
        assert report.known_calls >= 1
    else:
        assert report.known_calls == 0
        assert all(d.predicted_error is None and d.unpredicted for d in report.diagnostics)


def test_every_rule_has_invalid_and_valid_examples() -> None:
    for rule in CATALOG.rules.values():
        kinds = {e.kind for e in rule.examples}
        assert kinds == {"invalid", "valid"}, rule.code
        for example in rule.examples:
            if example.kind == "invalid":
                assert rule.code in example.expect


def test_every_check_names_a_rule_and_a_known_version() -> None:
    for check in CATALOG.checks:
        assert check.rule in CATALOG.rules
        assert set(check.versions) <= set(CATALOG.versions)
        if check.raises:
            assert check.message, check.id
