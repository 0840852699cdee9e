"""`mmalint check`: settings per path, the files or stdin through the pipeline, fixes written."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mmalint.catalog import Catalog, load_catalog
from mmalint.cli.args import FORMATS, add_check_arguments, prepare, split_codes
from mmalint.cli.console import EXIT_CLEAN, EXIT_ERROR, print_error
from mmalint.cli.summary import finish_stdin_fix, write_diff, write_report
from mmalint.config import (
    ARCH,
    ConfigError,
    Overrides,
    Resolver,
    UsageError,
    describe,
    resolve_target_jax,
    validate_selectors,
)

if TYPE_CHECKING:
    from mmalint.discover import Discovered
    from mmalint.fixes.write import Snapshot
    from mmalint.pipeline.cache import Cache
    from mmalint.pipeline.files import FileOutcome, RunResult
    from mmalint.pipeline.options import LintOptions
    from mmalint.settings import Settings


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="check files for MMA bugs", description="Check Python files for bugs in Mosaic GPU and Pallas MMA calls.")
    add_check_arguments(p)
    p.set_defaults(handler=_run_check)


def _resolver(args: argparse.Namespace, catalog: Catalog) -> Resolver:
    """Settings per checked path: the nearest `[tool.mmalint]` (or mmalint.toml), then the
    command line on top (`mmalint.config`)."""
    select = split_codes(args.select)
    ignore = split_codes(args.ignore)
    extend = split_codes(args.extend_select)
    validate_selectors(select, catalog, "--select")
    validate_selectors(ignore, catalog, "--ignore")
    validate_selectors(extend, catalog, "--extend-select")
    fixable, unfixable = split_codes(args.fixable), split_codes(args.unfixable)
    validate_selectors(fixable, catalog, "--fixable")
    validate_selectors(unfixable, catalog, "--unfixable")
    target = resolve_target_jax(args.target_jax, catalog) if args.target_jax else None
    if args.target_arch is not None and not ARCH.fullmatch(args.target_arch):
        raise UsageError(f"--target-arch: expected an architecture like sm_90a, got {args.target_arch!r}")
    overrides = Overrides(
        select=select or None,
        ignore=ignore or None,
        extend_select=extend,
        extend_exclude=split_codes(args.exclude),
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
    from mmalint.pipeline.files import Job, RunResult, run, work
    from mmalint.pipeline.options import LintOptions
    from mmalint.pipeline.text import InputError
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
    resolver = _resolver(args, catalog)
    if args.show_settings:
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
    cache: Cache | None = None  # standard input is never cached
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
            return write_diff(args, RunResult()) if args.diff else write_report(args, RunResult(), None, None)
        try:
            stdin_text = decode(data).text
        except InputError as exc:
            if args.fix and not args.diff:
                _echo_stdin(data)  # a filter must not swallow what it cannot read
            raise UsageError(f"stdin: {exc}") from None
        stdin_options = options
        if args.stdin_filename is not None and not stdin_name.endswith(".ipynb"):
            # Standard input as the file it names, in that file's tree (its imports, its callers).
            from dataclasses import replace

            from mmalint.tree import tree_spec

            tree = tree_spec(settings, (stdin_name,), ((stdin_name, stdin_text),), names={stdin_name: stdin_name})
            stdin_options = replace(options, program=tree)
        job: Job = (stdin_name, data, settings, stdin_options, fix_mode)
        outcome = work(job)
        result = RunResult()
        result.reports.append(outcome.report)
        result.fixed.update(outcome.fixed)
        if outcome.report.error is not None:
            result.input_errors.append(f"{stdin_name}: {outcome.report.error}")
        if args.fix and not args.diff:
            # ruff's convention: the fixed source on stdout, the findings left on stderr.
            fixed = outcome.fixed_data()
            _echo_stdin(fixed if fixed is not None else data)
            return finish_stdin_fix(args, result)
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
            settings_for = {f.display: resolver.for_file(f.path) for f in files}
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        for message in (*skipped, *resolver.warnings):
            print(f"mmalint: warning: {message}", file=sys.stderr)
        if args.show_files:
            return _show_files(files, errors)
        seen = _snapshots(files) if (args.fix and not args.diff) or args.add_noqa else {}
        cache = _cache(args, resolver)
        result = run(files, settings_for, jobs=args.jobs, options=options, fix=fix_mode, cache=cache)
        result.input_errors[:0] = errors
        if args.add_noqa:
            from mmalint.cli.add_noqa import run_add_noqa

            return run_add_noqa(result, files, seen)

    for name in result.not_converged:
        print(f"mmalint: warning: the fixes for {name} did not settle after repeated passes; "
              "the file is left as the last pass made it (please report this)", file=sys.stderr)
    if args.diff:
        code = write_diff(args, result)
        if cache is not None:
            cache.prune()
        return code
    if args.fix:
        _write_fixes(result, seen, settings_for, options, cache)
    if cache is not None:
        cache.prune()
    code = write_report(args, result, stdin_name, stdin_text)
    if args.confirm:
        from mmalint.cli.confirm import confirm_findings

        code = max(code, confirm_findings(args, result))
    return code


def _cache(args: argparse.Namespace, resolver: Resolver) -> Cache | None:
    """The result cache of this run (`pipeline.cache`), unless --no-cache."""
    if args.no_cache:
        return None
    from mmalint.cli.clean import cache_dir
    from mmalint.pipeline.cache import Cache

    return Cache(cache_dir(args, resolver), lambda message: print(f"mmalint: warning: {message}", file=sys.stderr))


def _snapshots(files: Sequence[Discovered]) -> dict[str, Snapshot | None]:
    """Each file as it is before the runner reads it, so a write can tell that it changed."""
    from mmalint.fixes.write import snapshot

    return {f.display: snapshot(f.path) for f in files}


def _write_fixes(
    result: RunResult,
    seen: dict[str, Snapshot | None],
    settings_for: dict[str, Settings],
    options: LintOptions,
    cache: Cache | None = None,
) -> None:
    """Write each fixed file that is still what was read (`mmalint.fixes.write`); a file left
    alone keeps the findings of the text that was read, and its fixes are not counted. A file
    written gets the cache entry of its new text (whose report the fix loop computed last)."""
    from mmalint.fixes.write import NotWritten, cleanup_on_termination, write_fixed
    from mmalint.pipeline.files import keep_fixed
    from mmalint.source_io import encode

    with cleanup_on_termination():
        for entry, outcome in list(result.changed):
            assert outcome.source is not None
            try:
                data = outcome.fixed_data()
                assert data is not None
                write_fixed(entry.path, encode(outcome.source.text, outcome.source), data, seen.get(entry.display))
                if cache is not None:
                    keep_fixed(cache, result, entry, outcome)
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
    from mmalint.pipeline.files import lint_as_read

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


def _named_excluded(resolver: Resolver, path: Path) -> bool:
    """`--force-exclude` for a name that is not walked (stdin's): whether it is excluded."""
    try:
        return bool(resolver.excludes_named(path))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _configured_unsafe_fixes(args: argparse.Namespace, resolver: Resolver) -> bool:
    """`unsafe-fixes` of the configuration of the first path, when neither --unsafe-fixes nor
    --no-unsafe-fixes was given: one answer for the run, as its summary counts fixes once."""
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
        print_error(message)
    return EXIT_ERROR if errors else EXIT_CLEAN


def _watch(args: argparse.Namespace) -> int:
    """`--watch`: the check, again whenever what it reads changes (`mmalint.cli.watch`)."""
    from mmalint.cli.watch import watch

    def check() -> None:
        try:
            _run_check(argparse.Namespace(**{**vars(args), "watch": False}))
        except UsageError as exc:  # a broken configuration: say so, and wait for the fix
            print_error(str(exc))

    clear = sys.stdout.isatty() and not args.output_file
    return watch(check, lambda: _watched(args), sys.stdout, clear=clear, announce=not args.quiet)


def _watched(args: argparse.Namespace) -> list[Path] | None:
    """The files a check of `args` reads and the configuration files that apply to them; None
    while the configuration cannot be read."""
    from mmalint.discover import discover

    paths = args.paths or ["."]
    try:
        resolver = _resolver(args, load_catalog())
        files = [f.path for f in discover(paths, resolver, [], [], force_exclude=args.force_exclude)]
        configs = {resolver.for_path(p).config_file for p in [*files, *map(Path, paths)]}
    except (UsageError, ConfigError):
        return None
    return [*files, *(Path(c) for c in sorted(c for c in configs if c))]
