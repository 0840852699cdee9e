"""The end of `mmalint check`: the report (to stdout or `--output-file`), the summary line,
`--statistics`, `--diff`, and the exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from mmalint.catalog import load_catalog
from mmalint.cli.console import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, print_error, wants_color
from mmalint.config import UsageError
from mmalint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from mmalint.pipeline.files import RunResult


def write_diff(args: argparse.Namespace, result: RunResult) -> int:
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
        print_error(message)
    if result.input_errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if result.changed else EXIT_CLEAN


def finish_stdin_fix(args: argparse.Namespace, result: RunResult) -> int:
    from mmalint.report import REPORTERS

    diagnostics = sorted(result.diagnostics, key=lambda d: d.sort_key())
    text = not args.quiet and args.format in ("full", "concise")
    if text and diagnostics and not args.fix_only:
        sys.stderr.write(REPORTERS["concise"](diagnostics, lambda name: None, False))
    if text and args.show_fixes:
        sys.stderr.write(_fixed_listing([(r.filename, result.fixed) for r in result.reports]))
    for message in result.input_errors:
        print_error(message)
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


def write_report(
    args: argparse.Namespace, result: RunResult, stdin_name: str | None, stdin_text: str | None
) -> int:
    from mmalint.inputs import UnreadableInput, read_regular
    from mmalint.lines import split_lines
    from mmalint.pipeline.text import InputError
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
                cache[name] = split_lines(rows_text(name, text))
            except (UnreadableInput, InputError):
                cache[name] = None
        return cache[name]

    machine = args.format in ("json", "sarif", "github")
    color = wants_color(args, sys.stdout) and not args.output_file and not machine
    listing = _fixed_listing((e.display, o.fixed) for e, o in result.changed) if args.show_fixes else ""
    if args.fix_only:  # ruff's: the fixes and nothing else, and no JSON for a machine
        text = "" if machine or args.quiet else listing + _fix_only_summary(diagnostics, result, args)
    elif args.statistics:
        text = _statistics(diagnostics, args.format, args.unsafe_fixes)
    else:
        if args.show_fixes and args.format == "full":
            from mmalint.cli.fix_report import full_with_fix_diffs

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
        print_error(message)
    if result.input_errors:
        return EXIT_ERROR
    return _exit_code(args, diagnostics, result)


def _fixed_listing(per_file: Iterable[tuple[str, Counter[str]]]) -> str:
    """`--show-fixes`: the fixes applied, per file and rule (`mmalint.cli.fix_report`)."""
    from mmalint.cli.fix_report import fixed_listing

    return fixed_listing(per_file, {code: rule.name for code, rule in load_catalog().rules.items()})


def _hidden(findings: list[Diagnostic], args: argparse.Namespace) -> int:
    """The unsafe fixes a run without --unsafe-fixes leaves out."""
    if args.unsafe_fixes:
        return 0
    return sum(1 for d in findings if d.fix is not None and d.fix.applicability == "unsafe")


def _fix_only_summary(diagnostics: list[Diagnostic], result: RunResult, args: argparse.Namespace) -> str:
    from mmalint.cli.fix_report import fix_only_summary

    findings = [d for d in diagnostics if d.severity in ("error", "warning")]
    return fix_only_summary(sum(result.fixed.values()), _hidden(findings, args))


def _summary(diagnostics: list[Diagnostic], result: RunResult, args: argparse.Namespace) -> str:
    from mmalint.cli.fix_report import hidden_note, plural

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

