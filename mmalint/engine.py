"""The engine for one file's text: index/parse -> facts -> rules -> diagnostics (`mmalint.pipeline`
runs it)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import overload

import libcst as cst

from mmalint.analysis import Analysis, Program, analyze, index_source, indexes, reads
from mmalint.analysis.calls import Context, Entry, MmaSite
from mmalint.analysis.program import real_path
from mmalint.analysis.source import BlockParseError, SourceFile, SourceSyntaxError
from mmalint.analysis.values import Origin
from mmalint.catalog import Catalog, load_catalog
from mmalint.checks.availability import UseFinding, evaluate_use
from mmalint.checks.call import MmaCall
from mmalint.checks.families import family, normalize
from mmalint.checks.rules import Finding, Predicted, evaluate
from mmalint.diagnostics import (
    Diagnostic,
    FileReport,
    Fix,
    Location,
    OperandPrediction,
    PredictedError,
    Range,
    Related,
)
from mmalint.fixes.plan import plan_fix
from mmalint.lines import forget_trees, keep_regions

# The text stage's names, for `source_io` and `notebook`, which still import them from here.
from mmalint.positions import range_of
from mmalint.settings import Settings


def check_text(
    filename: str, text: str, settings: Settings, catalog: Catalog | None = None, program: Program | None = None
) -> FileReport:
    """Every diagnostic for one file's text; with the checked tree (`program`), also those its
    callers and callees elsewhere in the tree decide (`reported_here` says which are this
    file's to report)."""
    catalog = catalog or load_catalog()
    version = settings.target_jax or catalog.versions[-1]
    key = (filename, text, version, program, catalog)
    last = _LAST[0] if _LAST else None
    if last is not None and last[0][:3] == key[:3] and last[0][3] is program and last[0][4] is catalog:
        # The same text in the same tree, checked again with other rules (fix verification's
        # "every rule" run): what the analysis found does not depend on the rules.
        return _report(filename, settings, catalog, program, version, last[1], last[2])
    try:
        source = indexed_by(program, filename, text) or index_source(filename, text, keep=True)
        reads.source(source)
    except SourceSyntaxError as exc:
        start = Location(exc.line, exc.column + 1)
        diag = Diagnostic(
            None,
            "syntax-error",
            "error",
            f"SyntaxError: {exc.message}",
            Range(filename, start, Location(exc.line, exc.column + 2)),
        )
        return FileReport(filename, (diag,), parsed=True)
    try:
        # Callers elsewhere in the tree are run for the calls this file's own roots leave
        # open: an operand's element type or signedness unknown.
        analysis = analyze(source, program=program, undecided=undecided(catalog, version))
    except RecursionError:  # the interpreter stops each run that overflows: this is a last resort
        return FileReport(filename, (), parsed=True, complete=False)
    _LAST[:] = [(key, source, analysis)]
    return _report(filename, settings, catalog, program, version, source, analysis)


def undecided(catalog: Catalog, version: str) -> Callable[[MmaSite], bool]:
    """Whether a recorded call leaves open what its callers elsewhere could decide: an
    operand's element type, signedness or shape unknown (`analysis.run.analyze`)."""
    return lambda site: not _decided(normalize(site, catalog, version))


def report_of(
    filename: str, text: str, settings: Settings, catalog: Catalog, program: Program | None,
    source: SourceFile, analysis: Analysis, evaluated: Evaluated | None = None,
) -> FileReport:
    """`check_text`'s report of an analysis of `text` made otherwise (the language server's
    re-run of one root, `lsp/rerun.py`); kept for fix verification's runs like one of its own.
    `evaluated`: what the rules made of each site in an earlier report with these settings."""
    version = settings.target_jax or catalog.versions[-1]
    _LAST[:] = [((filename, text, version, program, catalog), source, analysis)]
    return _report(filename, settings, catalog, program, version, source, analysis, evaluated)


# Per recorded call (by id; the call kept with it, alive): what it was normalized for (target
# jax, arch, catalog), its normalized form, and its findings (None: not asked yet).
Evaluated = dict[int, tuple[MmaSite, tuple[object, ...], MmaCall, list[Finding] | None]]

# Where every report of this process notes what the rules made of each call (`evaluations`).
_EVALUATED: list[Evaluated] = []


@contextmanager
def evaluations() -> Iterator[Evaluated]:
    """While active, every report notes what the rules made of each call: the language
    server's child keeps them with the lint, for the report of a re-run (`lsp/rerun.py`)."""
    found: Evaluated = {}
    _EVALUATED.append(found)
    try:
        yield found
    finally:
        _EVALUATED.remove(found)


def indexed_by(program: Program | None, filename: str, text: str) -> SourceFile | None:
    """The index of this very text that this process's programs made when a file checked before
    imported it (the same blocks, the libcst trees of those they parsed, under the same name):
    `ast` does not read the file again. Its tree is not kept then: the suppressions, if the
    file has findings, parse it themselves (`suppress._Statements`); its statements' rows are,
    so that a `noqa` is looked for in the statements that hold one, not in all the tokens."""
    real = real_path(filename) if program is not None else None
    found = indexes.indexed(real, text) if real is not None else None
    if found is None or found.filename != filename or found.text != text:
        return None
    if found.regions is not None:
        keep_regions(text, found.regions)  # the statements a `noqa` is looked for in
    return found


# The last text analysed, and what was found in it (`check_text`); `forget_analysis` drops it.
_LAST: list[tuple[tuple[object, ...], SourceFile, Analysis]] = []


def forget_analysis() -> None:
    """Let the last analysis go (the file stage is done with the file), and the trees kept
    for its suppressions."""
    _LAST.clear()
    forget_trees()


def _report(
    filename: str, settings: Settings, catalog: Catalog, program: Program | None, version: str,
    source: SourceFile, analysis: Analysis, evaluated: Evaluated | None = None,
) -> FileReport:
    """The diagnostics the rules of `settings` make of an analysis."""
    if evaluated is None and _EVALUATED:
        evaluated = _EVALUATED[-1]
    sites = [site for site in analysis.sites if reported_here(site.origin, source, program)]
    groups: dict[tuple[str, int, str | None], list[Finding]] = {}
    call_sites: dict[int, bool] = {}
    operands_seen: set[int] = set()  # calls some path knows the operand type of
    roles_seen: dict[int, set[str]] = {}  # per call, the roles some path knows the type of
    apis: dict[int, str] = {}
    arch = parse_arch(settings.target_arch)
    # Calls in a fallback's `try` (an `except` for the error an MMA path may raise), and their
    # findings.
    attempted: list[tuple[MmaSite, list[Finding]]] = []
    for site in sites:
        call = _normalized(site, settings, catalog, version, arch, evaluated)
        key = id(site.origin.node)
        apis[key] = call.api
        call_sites[key] = call_sites.get(key, False) or _fully_known(call)
        if not family(call.family).operands_unknown(call):
            operands_seen.add(key)
        roles_seen.setdefault(key, set()).update(
            role for role, op in call.operands.items() if op.element_type is not None)
        if site.context.expected_failure is not None and not settings.show_expected_failures:
            if _in_fallback(site.context):
                attempted.append((site, _findings(site, call, catalog, evaluated)))
            continue
        # A call in another file of the tree: its file's per-file ignores apply.
        where = site.origin.block.source.filename
        for finding in _findings(site, call, catalog, evaluated):
            if not settings.enabled_for(finding.rule.code, where):
                continue
            group_key = (finding.rule.code, key, finding.subject)
            groups.setdefault(group_key, []).append(finding)
    use_groups: dict[tuple[str, int], list[UseFinding]] = {}
    for use in analysis.uses:
        if not reported_here(use.origin, source, program):
            continue
        if use.context.expected_failure is not None and not settings.show_expected_failures:
            continue
        for use_finding in evaluate_use(use, catalog, version):
            if settings.enabled_for(use_finding.rule.code, use.origin.block.source.filename):
                key2 = (use_finding.entry.id, id(use_finding.origin.node))
                use_groups.setdefault(key2, []).append(use_finding)
    # A silent miscompute raises nothing: no `except` catches it, and the fallback it was
    # meant for never runs; unless something raises first (then it never runs). Whether a
    # check raises first in the same attempt is not told apart from an enclosing `try`, a
    # helper of another module or another world: any check that raises where a failure is
    # expected, anywhere the analysis went, keeps every silent one unreported.
    silent: set[int] = set()
    if attempted and not _raises_where_expected(analysis, settings, catalog, version, arch, evaluated):
        for site, found in attempted:
            for finding in found:
                if _raises(finding):
                    continue  # the fallback runs
                if not settings.enabled_for(finding.rule.code, site.origin.block.source.filename):
                    continue
                silent.add(id(finding))
                groups.setdefault((finding.rule.code, id(site.origin.node), finding.subject), []).append(finding)
    # A call whose own spelling raises before its checks run (`mma.mma(...)`, MMA503).
    raised_at = {id(fs[0].use.origin.node): fs[0] for fs in use_groups.values()
                 if fs[0].predicted is not None and fs[0].origin is fs[0].use.origin}
    diagnostics = []
    for (_code, key, _subject), findings in groups.items():
        if key in operands_seen:
            # A kernel analysed blind and launched with known refs is one call: where a path
            # knows the operands, its own checks decide, not the blind path's any-operand check.
            findings = [f for f in findings if f.check.stage != "any-operand"]
        # Likewise a finding over the dtypes a blind path allows, where a path knows one.
        findings = [f for f in findings if not roles_seen.get(key, set()) & set(f.enumerated)]
        if not findings:
            continue
        try:
            diagnostic = _diagnostic(findings, expected=not any(id(f) in silent for f in findings))
            if key in raised_at:
                diagnostic = _after_spelling(diagnostic, raised_at[key])
            diagnostics.append(diagnostic)
        except (BlockParseError, RecursionError):
            continue
    for use_findings in use_groups.values():
        try:
            diagnostics.append(_use_diagnostic(use_findings))
        except (BlockParseError, RecursionError):
            continue
    by_api: dict[str, int] = {}
    for api in apis.values():
        by_api[api] = by_api.get(api, 0) + 1
    return FileReport(
        filename,
        tuple(sorted(diagnostics, key=Diagnostic.sort_key)),
        parsed=True,
        calls=len(call_sites),
        known_calls=sum(call_sites.values()),
        calls_by_api=by_api,
        complete=analysis.complete,
    )


def _normalized(
    site: MmaSite, settings: Settings, catalog: Catalog, version: str, arch: tuple[int, int] | None,
    evaluated: Evaluated | None,
) -> MmaCall:
    asked = (version, settings.target_arch, settings.target_arch_given, catalog)
    known = evaluated.get(id(site)) if evaluated is not None else None
    if known is not None and known[0] is site and known[1] == asked:
        return known[2]
    given = arch if settings.target_arch_given or family(site.family).default_arch else None
    call = replace(normalize(site, catalog, version, given), target_arch_name=settings.target_arch)
    if evaluated is not None:
        evaluated[id(site)] = (site, asked, call, None)
    return call


def _findings(site: MmaSite, call: MmaCall, catalog: Catalog, evaluated: Evaluated | None) -> list[Finding]:
    known = evaluated.get(id(site)) if evaluated is not None else None
    if known is not None and known[0] is site and known[2] is call and known[3] is not None:
        return known[3]
    found = evaluate(call, catalog)
    if evaluated is not None and known is not None and known[0] is site and known[2] is call:
        evaluated[id(site)] = (site, known[1], call, found)
    return found


def reported_here(origin: Origin, source: SourceFile, program: Program | None) -> bool:
    """Whether a call the analysis of `source` reached is this file's to report.

    A finding belongs to the file of its MMA call, and is reported once per run: by that
    file's own check when the run checks it (its callers elsewhere in the tree run as its
    roots), else by the check of the file whose code reached it (a test checked alone, whose
    op lives in a module the run does not check), at the call in the other file.
    """
    other = origin.block.source
    return other is source or (program is not None and not program.is_checked(other))


def parse_arch(arch: str) -> tuple[int, int] | None:
    """`sm_90a` -> (9, 0); `sm_100a` -> (10, 0); None when not of that form."""
    match = re.fullmatch(r"sm_(\d+)(\d)[af]?", arch)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


def _known_facts(call: MmaCall) -> int:
    return sum(
        (op.element_type is not None) + (op.signedness is not None) + (op.layout is not None)
        + (op.shape is not None) + (op.data_dtype is not None)
        for op in call.operands.values()
    )


def _fully_known(call: MmaCall) -> bool:
    return all(
        op.element_type is not None and op.signedness is not None
        for op in call.operands.values()
    )


def _decided(call: MmaCall) -> bool:
    """Whether a call leaves nothing its callers could decide: every operand's element type,
    signedness and shape known (an integer wgmma's N from an autotuner's tiles)."""
    return _fully_known(call) and all(
        op.shape is not None and None not in op.shape for op in call.operands.values())


def _in_fallback(context: Context) -> bool:
    """Whether a call is in the `try` of a fallback (not a test's `assertRaises`, whose test
    fails by itself when nothing raises, nor sees what else in it may raise)."""
    return context.expected_failure is not None and isinstance(context.expected_failure.node, cst.Try)


def _raises_where_expected(
    analysis: Analysis, settings: Settings, catalog: Catalog, version: str, arch: tuple[int, int] | None,
    evaluated: Evaluated | None,
) -> bool:
    """Whether some check of a call or an API use where a failure is expected (a `try`'s, an
    `assertRaises`'s, in any module the analysis went through) raises, or may."""
    for site in analysis.sites:
        if site.context.expected_failure is None:
            continue
        call = _normalized(site, settings, catalog, version, arch, evaluated)
        if any(_raises(f) for f in _findings(site, call, catalog, evaluated)):
            return True
    return any(
        use.context.expected_failure is not None and any(f.predicted is not None for f in evaluate_use(use, catalog, version))
        for use in analysis.uses
    )


def _raises(finding: Finding) -> bool:
    """Whether the check a finding comes from raises, or may (whatever the operand's dtype)."""
    return finding.predicted is not None or bool(finding.by_operand) or bool(finding.enumerated)


def _diagnostic(findings: list[Finding], expected: bool = True) -> Diagnostic:
    """One diagnostic for a rule at a call site, whatever the number of worlds it holds in."""
    worldless = [f for f in findings if not f.call.site.context.world]
    # Describe the call from the path that knew the most about it (a kernel analysed blind and
    # launched with known refs is the same call): its facts and prediction are the sharpest.
    first = max(findings, key=lambda f: (_known_facts(f.call), not f.call.site.context.world))
    worlds: list[dict[str, str]] = []
    if not worldless:
        for f in findings:
            world = {b.name: b.label for b in f.call.site.context.world}
            if world not in worlds:
                worlds.append(world)
    context = first.call.site.context
    severity = "info" if expected and context.expected_failure is not None else first.rule.severity
    message = first.message
    if len(worlds) > 1:
        message += f" (and {len(worlds) - 1} more world{'s' if len(worlds) > 2 else ''})"
    predicted = _predicted_error(first.predicted)
    related = tuple(Related(n.message, range_of(n.origin)) for n in first.notes) + _entries(findings, first)
    call_range = range_of(first.call.origin)
    return Diagnostic(
        code=first.rule.code,
        name=first.rule.name,
        severity=severity,
        message=message,
        range=call_range,
        related=related,
        predicted_error=predicted,
        unpredicted=_unpredicted(first),
        predicted_by_operand=tuple(
            OperandPrediction(dtype, code, _predicted_error(p)) for dtype, code, p in first.by_operand
        ),
        help=first.help,
        # A finding some caller in another file decides is fixed there, or in a file that the
        # fix verification (one file's text) cannot see from here: no fix is offered.
        fix=None if any(f.call.site.context.entry is not None for f in findings) else _planned_fix(first),
        call=first.call.to_json(),
        world=worlds[0] if worlds else {},
        worlds=tuple(worlds),
        url=first.rule.url,
        masked_by=first.masked_by,
        statement_rows=(call_range.start.row, call_range.end.row),
    )


MAX_ENTRY_NOTES = 3


def _entries(findings: list[Finding], first: Finding) -> tuple[Related, ...]:
    """"called from ops_test.py:41 with dtype=int8": where the paths of a finding entered the
    module of its MMA call from another file of the tree (the first few callers)."""
    entries: list[Entry] = []
    seen: set[tuple[int, str]] = set()  # a call run again (a loop's, a world's) with the same facts: once
    for f in sorted(findings, key=lambda f: f is not first):
        entry = f.call.site.context.entry
        if entry is not None and (key := (id(entry.origin.node), str(entry))) not in seen:
            seen.add(key)
            entries.append(entry)
    notes = []
    for entry in entries[:MAX_ENTRY_NOTES]:
        where = range_of(entry.origin)
        text = f"called from {os.path.basename(where.filename)}:{where.start.row}"
        notes.append(Related(f"{text} with {entry}" if entry.bindings else text, where))
    if len(entries) > MAX_ENTRY_NOTES:
        more = len(entries) - MAX_ENTRY_NOTES
        notes[-1] = replace(notes[-1], message=f"{notes[-1].message} (and {more} more caller{'s' if more > 1 else ''})")
    return tuple(notes)


def _planned_fix(finding: Finding) -> Fix | None:
    """The planner's fix; none where the statement to edit is nested too deeply to rewrite,
    and none for a finding over dtypes mmalint could not decide (the fix depends on them)."""
    if finding.enumerated:
        return None
    try:
        return plan_fix(finding)
    except RecursionError:
        return None


@overload
def _predicted_error(p: Predicted) -> PredictedError: ...


@overload
def _predicted_error(p: None) -> None: ...


def _predicted_error(p: Predicted | None) -> PredictedError | None:
    """What the rules predict, as diagnostics carry it."""
    return None if p is None else PredictedError(p.exception, p.message, p.jax_version, p.match)


def _unpredicted(finding: Finding) -> str | None:
    if finding.predicted is not None:
        return None
    if finding.enumerated:
        return ("the dtype is not known: every dtype the kernel allows fails, but not with the "
                "same error")
    if finding.check.stage != "any-operand":
        return None
    return ("the operand dtype is unknown: jax raises whatever it is, but which error depends "
            "on it")


def _after_spelling(diagnostic: Diagnostic, first: UseFinding) -> Diagnostic:
    """A finding of a call that jax never reaches as written: the name it is called by raises
    first (`mma.mma(acc, a, b)` is an AttributeError, MMA503). What the finding predicts is what
    jax raises once that is fixed; a note says so, where the name is written."""
    assert first.predicted is not None
    node = first.use.origin.node
    where = range_of(Origin(first.use.origin.block, node.func)) if isinstance(node, cst.Call) else range_of(first.origin)
    note = Related(
        f"as written, jax raises {first.predicted.exception} here first ({first.rule.code}); "
        "this finding is what it raises once that is fixed",
        where,
    )
    return replace(diagnostic, masked_by=diagnostic.masked_by or first.rule.code,
                   related=(note, *diagnostic.related))


def _use_diagnostic(findings: list[UseFinding]) -> Diagnostic:
    first = findings[0]
    context = first.use.context
    severity = "info" if context.expected_failure is not None else first.rule.severity
    predicted = _predicted_error(first.predicted)
    where = range_of(first.origin)
    related: tuple[Related, ...] = ()
    if first.origin is not first.use.origin:
        related = (Related(f"{first.entry.feature} used here", range_of(first.use.origin)),)
    return Diagnostic(
        code=first.rule.code,
        name=first.rule.name,
        severity=severity,
        message=first.message,
        range=where,
        related=related,
        predicted_error=predicted,
        help=first.help,
        fix=None,
        call=None,
        url=first.rule.url,
        statement_rows=(where.start.row, where.end.row),
    )

