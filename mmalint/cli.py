"""The `mmalint` command: check, rule, rules, confirm.

Exit codes (like ruff): 0 no findings, 1 findings, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmalint import __version__
from mmalint.catalog import Catalog, CatalogError, load_catalog
from mmalint.cli_args import add_options, prepare
from mmalint.color import HELP as COLOR_HELP
from mmalint.color import use_color
from mmalint.diagnostics import Diagnostic
from mmalint.fixes.applicability import fix_applicability
from mmalint.usage import UsageError, resolve_target_jax, validate_selectors

if TYPE_CHECKING:
    from mmalint.discover import Discovered
    from mmalint.fixes.write import Snapshot
    from mmalint.lint import LintOptions
    from mmalint.runner import FileOutcome, RunResult
    from mmalint.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("full", "concise", "json", "sarif", "github")





def _error(message: str) -> None:
    print(f"mmalint: error: {message}", file=sys.stderr)


def _color(args: argparse.Namespace, stream: object) -> bool:
    return use_color(getattr(args, "color", None), stream, os.environ)


def _codes(values: Sequence[str] | None) -> tuple[str, ...]:
    items: list[str] = []
    for value in values or ():
        items.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(items)








# ---------------------------------------------------------------------- check


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="check files for MMA bugs", description="Check Python files for bugs in Mosaic GPU and Pallas MMA calls.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
    p.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default=None,
                   help="full (default, or $MMALINT_OUTPUT_FORMAT), concise, json, sarif (SARIF 2.1.0) "
                        "or github (workflow commands)")
    p.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes to enable (comma-separated; default ALL)")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="codes to enable on top of --select")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to disable")
    p.add_argument("--target-jax", metavar="VERSION", help="the jax version to predict (default: the project's jax, see the guide's Configuration)")
    p.add_argument("--target-arch", metavar="ARCH", help="the GPU to check for: sm_80, sm_86, sm_89, sm_90, sm_90a (default), sm_100a...")
    p.add_argument("--show-settings", action="store_true", help="print the resolved settings for the first path and exit")
    p.add_argument("--confirm", action="store_true", help="then confirm the findings with the reference lowering (see `mmalint confirm`)")
    p.add_argument("--confirm-tier", default="all", metavar="TIERS", help="with --confirm: ptx, jax, gpu, all (default) or a comma-separated list")
    p.add_argument("--stdin-filename", metavar="PATH",
                   help="check standard input, under this name (for its configuration, excludes and reports)")
    p.add_argument("--show-expected-failures", action="store_true", help="report calls inside assertRaises/pytest.raises as info")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="glob patterns of paths to skip (on top of the configuration's)")
    p.add_argument("--force-exclude", action="store_true", help="skip excluded files even when named on the command line (for pre-commit)")
    p.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                   help="skip what .gitignore files ignore when walking directories (default: on)")
    p.add_argument("--config", metavar="PATH", help="use this configuration file instead of the nearest one")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    fixes = p.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply the safe fixes (with - : print the fixed source on stdout)")
    fixes.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                       help="also apply (and count as fixable) the fixes marked unsafe "
                            "(default: the configuration's `unsafe-fixes`, else no)")
    fixes.add_argument("--diff", action="store_true", help="write nothing: print the fixes as a unified diff; exit 1 if there is one")
    fixes.add_argument("--exit-non-zero-on-fix", action="store_true", help="with --fix: exit 1 when a fix was applied, even if nothing is left")
    p.add_argument("--report-unused-noqa", action="store_true", help="report noqa directives that suppress nothing (MMA001)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (input errors still exit 2)")
    p.add_argument("--output-file", "-o", metavar="PATH", help="write the report to a file instead of stdout")
    p.add_argument("--docs-url", metavar="URL", default=os.environ.get("MMALINT_DOCS_URL") or None,
                   help="where the rule pages are published (the folder holding MMA101.md), for the "
                        "links in reports; default: $MMALINT_DOCS_URL, else the pages installed "
                        "with mmalint, as file:// URIs")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=COLOR_HELP)
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the findings")
    add_options(p, fixes)
    p.set_defaults(handler=_run_check)


def _resolver(args: argparse.Namespace, catalog: Catalog) -> Any:
    """Settings per checked path: the nearest `[tool.mmalint]` (or mmalint.toml), then the
    command line on top (`mmalint.config`)."""
    from mmalint.config import ConfigError, Overrides, Resolver

    select = _codes(args.select)
    ignore = _codes(args.ignore)
    extend = _codes(args.extend_select)
    validate_selectors(select, catalog, "--select")
    validate_selectors(ignore, catalog, "--ignore")
    validate_selectors(extend, catalog, "--extend-select")
    fixable, unfixable = _codes(args.fixable), _codes(args.unfixable)
    validate_selectors(fixable, catalog, "--fixable")
    validate_selectors(unfixable, catalog, "--unfixable")
    target = resolve_target_jax(args.target_jax, catalog) if args.target_jax else None
    if args.target_arch is not None and not re.fullmatch(r"sm_\d{2,3}[af]?", args.target_arch):
        raise UsageError(f"--target-arch: expected an architecture like sm_90a, got {args.target_arch!r}")
    overrides = Overrides(
        select=select or None,
        ignore=ignore or None,
        extend_select=extend,
        extend_exclude=_codes(args.exclude),
        target_jax=target,
        target_arch=args.target_arch,
        show_expected_failures=args.show_expected_failures,
        respect_gitignore=args.respect_gitignore,
        fixable=fixable or None,
        unfixable=unfixable or None,
    )
    try:
        return Resolver(
            overrides,
            None,  # no target set: the project's jax, else the installed one (mmalint.target_jax)
            config_path=Path(args.config) if args.config else None,
            isolated=args.isolated,
            catalog=catalog,
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _run_check(args: argparse.Namespace) -> int:
    from mmalint.discover import discover
    from mmalint.engine import InputError
    from mmalint.lint import LintOptions
    from mmalint.runner import Job, RunResult, run, work
    from mmalint.source_io import decode

    catalog = load_catalog()
    try:
        warnings = prepare(args, FORMATS, os.environ)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for warning in warnings:
        print(f"mmalint: warning: {warning}", file=sys.stderr)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.exit_non_zero_on_fix and not args.fix:
        raise UsageError("--exit-non-zero-on-fix needs --fix or --fix-only")
    if args.watch:
        return _watch(args)
    from mmalint.config import ConfigError

    resolver = _resolver(args, catalog)
    if args.show_settings:
        from mmalint.config import describe

        first = Path(args.stdin_filename or ".") if (args.paths or ["."]) == ["-"] else Path((args.paths or ["."])[0])
        try:
            sys.stdout.write(f"settings for {first}:\n" + describe(resolver.for_path(first)))
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        return EXIT_CLEAN
    if args.unsafe_fixes is None:
        args.unsafe_fixes = _configured_unsafe_fixes(args, resolver)
    options = LintOptions(report_unused_noqa=args.report_unused_noqa, ignore_noqa=args.ignore_noqa)
    fix_mode = ("unsafe" if args.unsafe_fixes else "safe") if (args.fix or args.diff) else ""
    paths = args.paths or ["."]
    stdin_name: str | None = None
    stdin_text: str | None = None
    result: RunResult
    if paths == ["-"]:
        stdin_name = args.stdin_filename or "-"
        try:
            settings = resolver.for_path(Path(args.stdin_filename or "."))
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        data = sys.stdin.buffer.read()
        if args.force_exclude and args.stdin_filename is not None and _named_excluded(resolver, Path(stdin_name)):
            # ruff's rule: an excluded stdin name is not checked, and a filter passes it through.
            if args.fix and not args.diff:
                _echo_stdin(data)
                return EXIT_CLEAN
            return _finish_diff(args, RunResult()) if args.diff else _report(args, RunResult(), None, None)
        try:
            stdin_text = decode(data).text
        except InputError as exc:
            if args.fix and not args.diff:
                _echo_stdin(data)  # a filter must not swallow what it cannot read
            raise UsageError(f"stdin: {exc}") from None
        job: Job = (stdin_name, data, settings, options, fix_mode)
        outcome = work(job)
        result = RunResult(files_seen=1)
        result.reports.append(outcome.report)
        result.fixed.update(outcome.fixed)
        if outcome.report.error is not None:
            result.input_errors.append(f"{stdin_name}: {outcome.report.error}")
        if args.fix and not args.diff:
            # ruff's convention: the fixed source on stdout, the findings left on stderr.
            fixed = outcome.fixed_data()
            _echo_stdin(fixed if fixed is not None else data)
            return _finish_stdin_fix(args, result)
        if outcome.fixed_text is not None:
            from mmalint.discover import Discovered

            result.changed.append((Discovered(Path(stdin_name), stdin_name, True), outcome))
    elif "-" in paths:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    else:
        errors: list[str] = []
        skipped: list[str] = []
        try:
            files = list(discover(paths, resolver, errors, skipped, force_exclude=args.force_exclude))
            settings_for = {f.display: resolver.for_path(f.path) for f in files}
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        for message in (*skipped, *resolver.warnings):
            print(f"mmalint: warning: {message}", file=sys.stderr)
        if args.show_files:
            return _show_files(files, errors)
        seen = _snapshots(files) if (args.fix and not args.diff) or args.add_noqa else {}
        result = run(files, settings_for, jobs=args.jobs, options=options, fix=fix_mode)
        result.input_errors[:0] = errors
        if args.add_noqa:
            return _add_noqa(result, files, seen)

    for name in result.not_converged:
        print(f"mmalint: warning: the fixes for {name} did not settle after repeated passes; "
              "the file is left as the last pass made it (please report this)", file=sys.stderr)
    if args.diff:
        return _finish_diff(args, result)
    if args.fix:
        _write_fixes(result, seen, settings_for, options)
    code = _report(args, result, stdin_name, stdin_text)
    if args.confirm:
        code = max(code, _confirm(args, result))
    return code


def _confirm(args: argparse.Namespace, result: RunResult) -> int:
    """`check --confirm`: run the reference lowering on what was found; progress and a line per
    finding go to stderr, so that `--format json` stays one JSON document on stdout."""
    from rich.console import Console

    from mmalint.confirm import summarize
    from mmalint.confirm.cli import confirm_with_progress, show
    from mmalint.confirm.runner import parse_tiers

    findings = [d.to_json() for d in result.diagnostics if d.code and d.call is not None]
    if not findings:
        return EXIT_CLEAN
    tiers = parse_tiers(args.confirm_tier)
    if not tiers or tiers - {"ptx", "jax", "gpu"}:
        raise UsageError(f"--confirm-tier takes ptx, jax, gpu, all or a list, got {args.confirm_tier!r}")
    color = _color(args, sys.stderr)
    console = Console(stderr=True, force_terminal=True if color else None, no_color=not color)
    verdicts = confirm_with_progress(findings, tiers, console, jobs=args.jobs or min(os.cpu_count() or 1, 8))
    show(verdicts, "concise", console)
    return summarize(verdicts).exit_code


def _finish_diff(args: argparse.Namespace, result: RunResult) -> int:
    out: list[str] = []
    for entry, outcome in result.changed:
        out.extend(outcome.diff(entry.display))  # a notebook's: of each changed cell
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in out)
    _emit(args, text)
    fixed = sum(result.fixed.values())
    if not args.quiet:
        if fixed:
            print(f"Would fix {fixed} error{'s' if fixed != 1 else ''}.", file=sys.stderr)
        else:
            print("No errors would be fixed.", file=sys.stderr)
    for message in result.input_errors:
        _error(message)
    if result.input_errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if result.changed else EXIT_CLEAN


def _snapshots(files: Sequence[Discovered]) -> dict[str, Snapshot | None]:
    """Each file as it is before the runner reads it, so a write can tell that it changed."""
    from mmalint.fixes.write import snapshot

    return {f.display: snapshot(f.path) for f in files}


def _write_fixes(
    result: RunResult,
    seen: dict[str, Snapshot | None],
    settings_for: dict[str, Settings],
    options: LintOptions,
) -> None:
    """Write each fixed file that is still what was read (`mmalint.fixes.write`); a file left
    alone keeps the findings of the text that was read, and its fixes are not counted."""
    from mmalint.fixes.write import NotWritten, cleanup_on_termination, write_fixed
    from mmalint.source_io import encode

    with cleanup_on_termination():
        for entry, outcome in list(result.changed):
            assert outcome.source is not None
            try:
                data = outcome.fixed_data()
                assert data is not None
                write_fixed(entry.path, encode(outcome.source.text, outcome.source), data, seen.get(entry.display))
            except NotWritten as exc:
                print(f"mmalint: warning: {entry.display}: {exc.reason}", file=sys.stderr)
                _not_fixed(result, entry.display, outcome, settings_for[entry.display], options)
            except (OSError, UnicodeEncodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                result.input_errors.append(f"{entry.display}: cannot write the fixes: {reason}")
                _not_fixed(result, entry.display, outcome, settings_for[entry.display], options)


def _not_fixed(
    result: RunResult, display: str, outcome: FileOutcome, settings: Settings, options: LintOptions
) -> None:
    """Account for a file whose fixes were not written: what was read is what is reported."""
    from mmalint.runner import lint_as_read

    result.fixed.subtract(outcome.fixed)
    result.fixed += Counter()  # drop the codes that fell to zero
    report = lint_as_read(display, outcome, settings, options)
    result.reports[:] = [report if r is outcome.report else r for r in result.reports]
    result.changed[:] = [(e, o) for e, o in result.changed if o is not outcome]


def _echo_stdin(data: bytes) -> None:
    """Bytes to stdout as they are: no re-encoding, no newline translation."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _named_excluded(resolver: Any, path: Path) -> bool:
    """`--force-exclude` for a name that is not walked (stdin's): whether it is excluded."""
    from mmalint.config import ConfigError

    try:
        return bool(resolver.excludes_named(path))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _configured_unsafe_fixes(args: argparse.Namespace, resolver: Any) -> bool:
    """`unsafe-fixes` of the configuration of the first path, when neither --unsafe-fixes nor
    --no-unsafe-fixes was given: one answer for the run, as its summary counts fixes once."""
    from mmalint.config import ConfigError

    first = (args.stdin_filename or ".") if args.paths == ["-"] else (args.paths or ["."])[0]
    try:
        return bool(resolver.for_path(Path(first)).unsafe_fixes)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _show_files(files: Sequence[Discovered], errors: list[str]) -> int:
    """`--show-files`: the files a check would read, one per line."""
    sys.stdout.write("".join(f"{f.display}\n" for f in files))
    sys.stdout.flush()
    for message in errors:
        _error(message)
    return EXIT_ERROR if errors else EXIT_CLEAN


def _add_noqa(result: RunResult, files: Sequence[Discovered], seen: dict[str, Snapshot | None]) -> int:
    """`--add-noqa`: write a `# noqa` for every finding (`mmalint.add_noqa`); exit 0 unless a
    file could not be read or written."""
    from mmalint.add_noqa import add_noqa_to_files
    from mmalint.fix_report import plural

    added = add_noqa_to_files(result.reports, files, seen)
    for message in added.warnings:
        print(f"mmalint: warning: {message}", file=sys.stderr)
    print(f"Added {plural(added.rows, 'noqa directive')}.", file=sys.stderr)
    errors = [*result.input_errors, *added.errors]
    for message in errors:
        _error(message)
    return EXIT_ERROR if errors else EXIT_CLEAN


def _watch(args: argparse.Namespace) -> int:
    """`--watch`: the check, again whenever what it reads changes (`mmalint.watch`)."""
    from mmalint.watch import watch

    def check() -> None:
        try:
            _run_check(argparse.Namespace(**{**vars(args), "watch": False}))
        except UsageError as exc:  # a broken configuration: say so, and wait for the fix
            _error(str(exc))

    clear = sys.stdout.isatty() and not args.output_file
    return watch(check, lambda: _watched(args), sys.stdout, clear=clear, announce=not args.quiet)


def _watched(args: argparse.Namespace) -> list[Path] | None:
    """The files a check of `args` reads and the configuration files that apply to them; None
    while the configuration cannot be read."""
    from mmalint.config import ConfigError
    from mmalint.discover import discover

    paths = args.paths or ["."]
    try:
        resolver = _resolver(args, load_catalog())
        files = [f.path for f in discover(paths, resolver, [], [], force_exclude=args.force_exclude)]
        configs = {resolver.for_path(p).config_file for p in [*files, *map(Path, paths)]}
    except (UsageError, ConfigError):
        return None
    return [*files, *(Path(c) for c in sorted(c for c in configs if c))]


def _finish_stdin_fix(args: argparse.Namespace, result: RunResult) -> int:
    from mmalint.report import REPORTERS

    diagnostics = sorted(result.diagnostics, key=lambda d: d.sort_key())
    text = not args.quiet and args.format in ("full", "concise")
    if text and diagnostics and not args.fix_only:
        sys.stderr.write(REPORTERS["concise"](diagnostics, lambda name: None, False))
    if text and args.show_fixes:
        sys.stderr.write(_fixed_listing([(r.filename, result.fixed) for r in result.reports]))
    for message in result.input_errors:
        _error(message)
    if result.input_errors:
        return EXIT_ERROR
    return _exit_code(args, diagnostics, result)


def _exit_code(args: argparse.Namespace, diagnostics: list[Diagnostic], result: RunResult) -> int:
    findings = [d for d in diagnostics if d.severity in ("error", "warning")]
    if args.fix and args.exit_non_zero_on_fix and result.fixed:
        return EXIT_FINDINGS
    if findings and not args.exit_zero and not args.fix_only:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _emit(args: argparse.Namespace, text: str) -> None:
    if args.output_file:
        from mmalint.fileio import write_atomic
        from mmalint.fixes.write import cleanup_on_termination

        target = Path(args.output_file)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with cleanup_on_termination():  # SIGTERM mid-write leaves no temp file behind
                write_atomic(target, text.encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"--output-file: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _report(
    args: argparse.Namespace, result: RunResult, stdin_name: str | None, stdin_text: str | None
) -> int:
    from mmalint.engine import InputError
    from mmalint.inputs import UnreadableInput, read_regular
    from mmalint.report import REPORTERS
    from mmalint.source_io import decode

    diagnostics = sorted(result.diagnostics, key=lambda d: d.sort_key())
    if args.docs_url:
        from dataclasses import replace

        from mmalint.catalog import rule_url

        diagnostics = [replace(d, url=rule_url(d.code, args.docs_url)) if d.code else d
                       for d in diagnostics]
    cache: dict[str, list[str] | None] = {}

    def source_lines(name: str) -> list[str] | None:
        if name not in cache:
            from mmalint.notebook import rows_text  # a notebook's rows: of its code cells

            try:
                text = stdin_text if stdin_text is not None and name == stdin_name else decode(read_regular(name)).text
                cache[name] = _split_lines(rows_text(name, text))
            except (UnreadableInput, InputError):
                cache[name] = None
        return cache[name]

    machine = args.format in ("json", "sarif", "github")
    color = _color(args, sys.stdout) and not args.output_file and not machine
    listing = _fixed_listing((e.display, o.fixed) for e, o in result.changed) if args.show_fixes else ""
    if args.fix_only:  # ruff's: the fixes and nothing else, and no JSON for a machine
        text = "" if machine or args.quiet else listing + _fix_only_summary(diagnostics, result, args)
    elif args.statistics:
        text = _statistics(diagnostics, args.format, args.unsafe_fixes)
    else:
        if args.show_fixes and args.format == "full":
            from mmalint.fix_report import full_with_fix_diffs

            text = full_with_fix_diffs(diagnostics, source_lines, color)
        elif args.format == "sarif":
            from mmalint.report import sarif

            text = sarif.render(diagnostics, source_lines, color, docs_base_url=args.docs_url)
        else:
            text = REPORTERS[args.format](diagnostics, source_lines, color)
        if not machine and not args.quiet:
            text += listing + _summary(diagnostics, result, args)
    _emit(args, text)
    for message in result.input_errors:
        _error(message)
    if result.input_errors:
        return EXIT_ERROR
    return _exit_code(args, diagnostics, result)


def _fixed_listing(per_file: Iterable[tuple[str, Counter[str]]]) -> str:
    """`--show-fixes`: the fixes applied, per file and rule (`mmalint.fix_report`)."""
    from mmalint.fix_report import fixed_listing

    return fixed_listing(per_file, {code: rule.name for code, rule in load_catalog().rules.items()})


def _hidden(findings: list[Diagnostic], args: argparse.Namespace) -> int:
    """The unsafe fixes a run without --unsafe-fixes leaves out."""
    if args.unsafe_fixes:
        return 0
    return sum(1 for d in findings if d.fix is not None and d.fix.applicability == "unsafe")


def _fix_only_summary(diagnostics: list[Diagnostic], result: RunResult, args: argparse.Namespace) -> str:
    from mmalint.fix_report import fix_only_summary

    findings = [d for d in diagnostics if d.severity in ("error", "warning")]
    return fix_only_summary(sum(result.fixed.values()), _hidden(findings, args))


def _summary(diagnostics: list[Diagnostic], result: RunResult, args: argparse.Namespace) -> str:
    from mmalint.fix_report import hidden_note, plural

    findings = [d for d in diagnostics if d.severity in ("error", "warning")]
    n = len(findings)
    fixed = sum(result.fixed.values())
    if args.fix and fixed:
        if n == 0:
            return f"Found {plural(fixed, 'error')} ({fixed} fixed, 0 remaining).\n"
        text = f"Found {plural(fixed + n, 'error')} ({fixed} fixed, {n} remaining)."
    elif n == 0:
        # A path that could not be checked is not a passed check: its error says so alone.
        return "" if result.input_errors else "All checks passed!\n"
    else:
        text = f"Found {plural(n, 'error')}."

    hidden = _hidden(findings, args)
    fixable = sum(1 for d in findings if d.fix is not None) - hidden
    if fixable:
        text += f"\n[*] {fixable} fixable with the `--fix` option"
        if hidden:
            text += f" ({hidden_note(hidden)})"
        text += "."
    elif hidden:
        text += f"\nNo fixes available ({hidden_note(hidden)})."
    return text + "\n"


def _statistics(diagnostics: list[Diagnostic], fmt: str, unsafe: bool) -> str:
    """Findings per rule, most frequent first (ruff's --statistics): text, or JSON for json."""
    counts: dict[tuple[str, str], list[int]] = {}
    for d in diagnostics:
        entry = counts.setdefault((d.code or "", d.name), [0, 0])
        entry[0] += 1
        if d.fix is not None and (d.fix.applicability == "safe" or unsafe):
            entry[1] += 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    if fmt == "json":
        data = [
            {"code": code or None, "name": name, "count": n, "fixable": fixable}
            for (code, name), (n, fixable) in rows
        ]
        return json.dumps(data, indent=2) + "\n"
    lines = [
        f"{n:>5}\t{code or '-':<7}\t{'[*]' if fixable == n else ('[-]' if fixable else '[ ]')} {name}"
        for (code, name), (n, fixable) in rows
    ]
    return "\n".join(lines) + ("\n" if lines else "")


# ---------------------------------------------------------------------- rule / rules


def _add_rule(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rule", help="explain a rule", description="Print a rule's page: what it "
                       "flags, why, what jax raises per version, its fix and its examples.")
    p.add_argument("code", metavar="CODE", help="a rule code (MMA101) or name (integer-operands-need-int32-accumulator)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default: Markdown, rendered on a terminal) or json")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=COLOR_HELP)
    p.set_defaults(handler=_run_rule)
    q = sub.add_parser("rules", help="list all rules", description="List every rule: code, name, "
                       "severity, whether its fix is safe, unsafe or sometimes either, and summary.")
    q.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default: a table) or json (every rule with its checks and examples)")
    q.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=COLOR_HELP)
    q.set_defaults(handler=_run_rules)


def _rule_json(code: str, catalog: Catalog) -> dict[str, object]:
    r = catalog.rules[code]
    return {
        "code": r.code,
        "name": r.name,
        "severity": r.severity,
        "family": r.family,
        "summary": r.summary,
        "explanation": r.explanation,
        "fix": r.fix_title if r.fixable else None,
        "fixable": r.fixable,
        "fix_safety": r.fix_safety or None,
        "fix_applicability": fix_applicability(r),
        "url": r.url,
        "checks": [
            {"api": c.api, "versions": list(c.versions), "exception": c.exception or None,
             "message": c.message or None, "match": c.match}
            for c in catalog.checks if c.rule == code
        ],
        "examples": [
            {"title": e.title, "kind": e.kind, "expect": list(e.expect), "code": e.code}
            for e in r.examples
        ],
    }


def _run_rule(args: argparse.Namespace) -> int:
    from mmalint.rulepage import rule_markdown

    catalog = load_catalog()
    code = args.code.upper()
    if code not in catalog.rules:
        by_name = [c for c, r in catalog.rules.items() if r.name == args.code]
        if not by_name:
            raise UsageError(f"unknown rule {args.code!r} (see `mmalint rules`)")
        code = by_name[0]
    if args.format == "json":
        print(json.dumps(_rule_json(code, catalog), indent=2))
        return EXIT_CLEAN
    text = rule_markdown(catalog.rules[code], catalog)
    if _color(args, sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        Console(force_terminal=True).print(Markdown(text))
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN


def _run_rules(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    if args.format == "json":
        print(json.dumps([_rule_json(c, catalog) for c in sorted(catalog.rules)], indent=2))
        return EXIT_CLEAN
    from rich.console import Console
    from rich.table import Table

    table = Table(title=None, box=None, show_edge=False, pad_edge=False)
    for column in ("code", "name", "severity", "fix", "summary"):
        table.add_column(column, no_wrap=column != "summary")
    for code in sorted(catalog.rules):
        r = catalog.rules[code]
        table.add_row(code, r.name, r.severity, fix_applicability(r) or "", r.summary)
    color = _color(args, sys.stdout)
    Console(force_terminal=color, no_color=not color, width=200 if not color else None).print(table)
    return EXIT_CLEAN


# ---------------------------------------------------------------------- confirm


def _add_confirm(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    try:
        from mmalint.confirm import cli as confirm_cli
    except ImportError:
        return
    p = sub.add_parser("confirm", help="confirm findings with the reference lowering (ptxas, jax, a GPU)")
    confirm_cli.add_arguments(p)
    p.set_defaults(handler=confirm_cli.run)


# ---------------------------------------------------------------------- server


def _add_server(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "server",
        help="run the language server on stdin/stdout (for editors)",
        description="Run the mmalint Language Server over stdio: diagnostics, quick fixes, fix all. "
        "Needs the `lsp` extra: pip install 'mmalint[lsp]'.",
    )
    p.set_defaults(handler=_run_server)


def _run_server(args: argparse.Namespace) -> int:
    try:
        from mmalint.lsp.server import main as server_main
    except ImportError as exc:
        raise UsageError(f"the language server needs pygls: pip install 'mmalint[lsp]' ({exc})") from None
    return server_main()


# ---------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmalint",
        description="Static checker for MMA calls in JAX Mosaic GPU and Pallas Mosaic GPU kernels.",
    )
    parser.add_argument("--version", action="version", version=f"mmalint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_check(sub)
    _add_rule(sub)
    _add_confirm(sub)
    _add_server(sub)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)  # for errors found after parsing
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the usage of the command they were given to, not the top level's (exits 2)
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return handler(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except CatalogError as exc:
        _error(f"the rule catalog is broken: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # no traceback reaches the user
        if os.environ.get("MMALINT_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc} (set MMALINT_DEBUG=1 for the traceback; please report it)")
        return EXIT_ERROR


def _split_lines(text: str) -> list[str]:
    from mmalint.analysis.source import split_lines

    return split_lines(text)


if __name__ == "__main__":
    sys.exit(main())

