"""The file stage: one file through every step a user sees: engine, fix verification, suppressions.

The engine (`mmalint.engine`) finds what is wrong; this module decides what the user is shown:
fixes that survive verification, findings that no `# noqa` hides, and (when asked) the noqa
directives that hide nothing. The CLI, the fixer and the language server all go through here.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from mmalint.analysis import Program, ProgramSpec
from mmalint.analysis.budget import check_superseded
from mmalint.catalog import Catalog, load_catalog
from mmalint.diagnostics import Diagnostic
from mmalint.engine import FileReport, check_text, forget_analysis, indexed_by
from mmalint.fixes.verify import verify_fixes
from mmalint.pipeline.options import LintOptions
from mmalint.pipeline.reach import program_for, worth_checking
from mmalint.pipeline.text import InputError, decode_source
from mmalint.settings import Settings
from mmalint.suppress import NoqaOptions, apply_suppressions
from mmalint.tree import Observed


def lint_text(
    filename: str,
    text: str,
    settings: Settings,
    options: LintOptions | None = None,
    catalog: Catalog | None = None,
    program: Program | None = None,
) -> FileReport:
    """The report a user sees for a file's text. `program`: the checked tree to read it in
    (by default the one `options.program` names, `program_of`)."""
    catalog = catalog or load_catalog()
    options = options or LintOptions()
    if program is None:
        program = program_of(options)
    with _file_stage():  # the analysis is kept until the fixes are verified
        report = check_text(filename, text, settings, catalog, program)
        return lint_analysed(filename, text, settings, options, catalog, program, report)


def program_of(options: LintOptions) -> Program | None:
    """The checked tree that `options` name, as one lint reads it."""
    if options.program is None:
        return None
    # A program shared by the files of a run answers from what other files' checks read:
    # a record of one file's inputs needs one of its own (what it indexes is shared still).
    return Program(options.program, decode_source, Observed()) if options.observe else program_for(options.program)


@contextmanager
def _file_stage() -> Iterator[None]:
    # Parsing the checked file makes Python warn about *its* code (`1if x`, "\d"): that is
    # noise on mmalint's stderr, not a finding.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            yield
        finally:
            forget_analysis()  # kept only while fix verification checks the same text again


def lint_analysed(
    filename: str,
    text: str,
    settings: Settings,
    options: LintOptions,
    catalog: Catalog,
    program: Program | None,
    report: FileReport,
) -> FileReport:
    """`lint_text`'s report from the engine's `report` of the text (found by `lint_text`, or
    otherwise: the language server's re-run of some roots, `lsp/rerun.py`): fix verification,
    suppressions and the findings elsewhere."""
    with _file_stage():
        check_superseded()
        # Findings at MMA calls in other files of the tree (this file's code reached them; the run
        # does not check theirs): that file's noqa comments decide, and no fix edits it from here.
        diagnostics = [d for d in report.diagnostics if d.code is None or d.filename == filename]
        elsewhere: dict[str, list[Diagnostic]] = {}
        for d in report.diagnostics:
            if d.code is not None and d.filename != filename:
                elsewhere.setdefault(d.filename, []).append(replace(d, fix=None))
        if not report.complete:
            # Verifying re-runs the analysis once a fix, each time to the end of its budget, and
            # could not see what a fix changes where the analysis did not reach: none is offered.
            diagnostics = [replace(d, fix=None) for d in diagnostics]
        else:
            diagnostics = verify_fixes(filename, text, diagnostics, settings, catalog, program)
        noqa = NoqaOptions(
            report_unused=options.report_unused_noqa,
            enabled=lambda code: settings.enabled_for(code, filename),
            ignore=options.ignore_noqa,
        )
        check_superseded()
        diagnostics = apply_suppressions(filename, diagnostics, text, catalog, noqa)
        for other, found in elsewhere.items():
            other_text = program.text_named(other) if program is not None else None
            if other_text is None:
                diagnostics.extend(found)
                continue
            indexed_by(program, other, other_text)  # its statements' rows, where its noqa comments are
            other_noqa = NoqaOptions(enabled=functools.partial(_enabled, settings, other), ignore=options.ignore_noqa)
            diagnostics.extend(apply_suppressions(other, found, other_text, catalog, other_noqa))
        # `unfixable` rules keep their findings, without the fix (ruff drops it the same way), so
        # neither `--fix`, the `[*]` counts nor an editor's quick fix offers one.
        diagnostics = [d if settings.may_fix(d.code) else replace(d, fix=None) for d in diagnostics]
        diagnostics.sort(key=lambda d: d.sort_key())
        observed = (program.observed if program is not None else Observed()) if options.observe else None
        return replace(report, diagnostics=tuple(diagnostics), observed=observed)


def _enabled(settings: Settings, filename: str, code: str) -> bool:
    return settings.enabled_for(code, filename)


def lint_bytes(
    filename: str, data: bytes, settings: Settings, options: LintOptions | None = None
) -> FileReport:
    """The report for a file's bytes; the prefilter skips files that cannot hold an MMA call
    (unless unused noqa directives are wanted and the file has some)."""
    options = options or LintOptions()
    if not worth_checking(filename, data, options):
        return FileReport(filename)
    try:
        text = decode_source(data)
    except InputError as exc:
        return FileReport(filename, error=str(exc))
    return lint_text(filename, text, settings, options)


def check_bytes(filename: str, data: bytes, settings: Settings, program: ProgramSpec | None = None) -> FileReport:
    """The engine's findings for a file's bytes, before fix verification and suppressions (what
    the benchmarks measure); the prefilter skips files that cannot hold an MMA call."""
    if not worth_checking(filename, data, LintOptions(program=program)):
        return FileReport(filename)
    try:
        text = decode_source(data)
    except InputError as exc:
        return FileReport(filename, error=str(exc))
    return check_text(filename, text, settings, program=program_for(program) if program is not None else None)
