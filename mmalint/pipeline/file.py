"""The file stage: one file through every step a user sees: engine, fix verification, suppressions.

The engine (`mmalint.engine`) finds what is wrong; this module decides what the user is shown:
fixes that survive verification, findings that no `# noqa` hides, and (when asked) the noqa
directives that hide nothing. The CLI, the fixer and the language server all go through here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

from mmalint.catalog import Catalog, load_catalog
from mmalint.engine import FileReport, check_text
from mmalint.fixes.verify import verify_fixes
from mmalint.pipeline.text import InputError, decode_source, worth_running
from mmalint.settings import Settings
from mmalint.suppress import NoqaOptions, apply_suppressions


@dataclass(frozen=True)
class LintOptions:
    """What the user asked for beyond the rule settings."""

    report_unused_noqa: bool = False
    ignore_noqa: bool = False  # `--ignore-noqa`: report the findings that noqa comments hide


def lint_text(
    filename: str,
    text: str,
    settings: Settings,
    options: LintOptions | None = None,
    catalog: Catalog | None = None,
) -> FileReport:
    # Parsing the checked file makes Python warn about *its* code (`1if x`, "\d"): that is
    # noise on mmalint's stderr, not a finding.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return _lint_text(filename, text, settings, options, catalog)


def _lint_text(
    filename: str,
    text: str,
    settings: Settings,
    options: LintOptions | None,
    catalog: Catalog | None,
) -> FileReport:
    catalog = catalog or load_catalog()
    options = options or LintOptions()
    report = check_text(filename, text, settings, catalog)
    diagnostics = list(report.diagnostics)
    if not report.complete:
        # Verifying re-runs the analysis once a fix, each time to the end of its budget, and
        # could not see what a fix changes where the analysis did not reach: none is offered.
        diagnostics = [replace(d, fix=None) for d in diagnostics]
    else:
        diagnostics = verify_fixes(filename, text, diagnostics, settings, catalog)
    noqa = NoqaOptions(
        report_unused=options.report_unused_noqa,
        enabled=lambda code: settings.enabled_for(code, filename),
        ignore=options.ignore_noqa,
    )
    diagnostics = apply_suppressions(filename, diagnostics, text, catalog, noqa)
    # `unfixable` rules keep their findings, without the fix (ruff drops it the same way), so
    # neither `--fix`, the `[*]` counts nor an editor's quick fix offers one.
    diagnostics = [d if settings.may_fix(d.code) else replace(d, fix=None) for d in diagnostics]
    diagnostics.sort(key=lambda d: d.sort_key())
    return replace(report, diagnostics=tuple(diagnostics))


def lint_bytes(
    filename: str, data: bytes, settings: Settings, options: LintOptions | None = None
) -> FileReport:
    """The report for a file's bytes; the prefilter skips files that cannot hold an MMA call
    (unless unused noqa directives are wanted and the file has some)."""
    options = options or LintOptions()
    if not worth_running(data, options.report_unused_noqa):
        return FileReport(filename)
    try:
        text = decode_source(data)
    except InputError as exc:
        return FileReport(filename, error=str(exc))
    return lint_text(filename, text, settings, options)


def check_bytes(filename: str, data: bytes, settings: Settings) -> FileReport:
    """The engine's findings for a file's bytes, before fix verification and suppressions (what
    the benchmarks measure); the prefilter skips files that cannot hold an MMA call."""
    if not worth_running(data):
        return FileReport(filename)
    try:
        text = decode_source(data)
    except InputError as exc:
        return FileReport(filename, error=str(exc))
    return check_text(filename, text, settings)
