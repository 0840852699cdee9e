"""`mmalint check --add-noqa`: a `# noqa: CODE` on the line of each finding.

The directive goes where ruff puts it: on the row that holds the start of the finding, or, when
that row ends in a backslash continuation, on the last row of the continued line (a comment
after a backslash is a syntax error). Codes join a `# noqa: ...` already on that row
(`# noqa: E501` becomes `# noqa: E501, MMA101`); a row with a bare `# noqa` needs nothing. A row
that a multi-line string spans past has no place for a comment: it is left alone and reported.
MMA001 (an unused directive) is never answered with another directive.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmalint.cli.console import EXIT_CLEAN, EXIT_ERROR, print_error
from mmalint.cli.fix_report import plural
from mmalint.diagnostics import Diagnostic
from mmalint.discover import Discovered
from mmalint.engine import FileReport
from mmalint.fixes.write import NotWritten, Snapshot, cleanup_on_termination, write_fixed
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.pipeline.text import InputError
from mmalint.source_io import decode, encode

if TYPE_CHECKING:
    from mmalint.pipeline.files import RunResult
from mmalint.suppress import UNUSED_NOQA, continued_rows, parse_directives, split_lines, string_rows


@dataclass(frozen=True)
class Skipped:
    """Findings whose row is inside a multi-line string, so no directive was added for them."""

    row: int
    codes: tuple[str, ...]


@dataclass(frozen=True)
class NoqaAdded:
    text: str
    rows: int  # rows that got a directive, or new codes in the one they had
    skipped: tuple[Skipped, ...] = ()


def add_noqa(text: str, diagnostics: Iterable[Diagnostic]) -> NoqaAdded:
    """`text` with a `# noqa` directive for each finding of `diagnostics` (all of this file)."""
    strings = string_rows(text)
    continued = continued_rows(text)
    wanted: dict[int, set[str]] = {}
    skipped: dict[int, set[str]] = {}
    for d in diagnostics:
        if d.code is None or d.code == UNUSED_NOQA:
            continue
        row = d.range.start.row
        while row in continued:
            row += 1
        (skipped if row in strings else wanted).setdefault(row, set()).add(d.code)
    lines = split_lines(text)
    directives = parse_directives(text).lines
    rows = 0
    for row in sorted(wanted):
        if row > len(lines):
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        existing = directives.get(row)
        if existing:
            directive = existing[0]
            if directive.codes is None:
                continue  # a bare `# noqa` covers every code already
            new = sorted(c for c in wanted[row] if not directive.matches(c))
            if not new:
                continue
            at = directive.codes_end
            body = body[:at] + ", " + ", ".join(new) + body[at:]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(wanted[row]))
        lines[row - 1] = body + ending
        rows += 1
    return NoqaAdded(
        "".join(lines), rows, tuple(Skipped(r, tuple(sorted(c))) for r, c in sorted(skipped.items()))
    )


@dataclass(frozen=True)
class FilesResult:
    rows: int  # directives added or extended, over all files
    warnings: tuple[str, ...]  # rows left alone, files changed since they were read
    errors: tuple[str, ...]  # files that could not be read back or written


def add_noqa_to_files(
    reports: Iterable[FileReport],
    files: Iterable[Discovered],
    seen: Mapping[str, Snapshot | None],
) -> FilesResult:
    """Write the directives for each report's findings into its file, if the file is still what
    was checked (`seen`: its state before the check, as `--fix` uses it)."""
    entries = {f.display: f for f in files}
    rows = 0
    warnings: list[str] = []
    errors: list[str] = []
    with cleanup_on_termination():
        for report in reports:
            entry = entries.get(report.filename)
            if entry is None or not any(d.code is not None for d in report.diagnostics):
                continue
            try:
                data = read_regular(entry.path)
                source = decode(data)
                from mmalint.notebook import editable  # a notebook: its code cells, put back

                checked, written = editable(entry.display, source.text)
            except (UnreadableInput, InputError) as exc:
                errors.append(f"{entry.display}: cannot add noqa directives: {exc}")
                continue
            # Not the findings at MMA calls in other files (a file the run does not check).
            added = add_noqa(checked, [d for d in report.diagnostics if d.filename == report.filename])
            for skip in added.skipped:
                warnings.append(
                    f"{entry.display}:{skip.row}: no `# noqa: {', '.join(skip.codes)}` added: "
                    "the line is inside a multi-line string (add one by hand on a line of the "
                    "statement outside it)"
                )
            if not added.rows:
                continue
            try:
                write_fixed(entry.path, data, encode(written(added.text), source), seen.get(entry.display))
            except NotWritten as exc:
                warnings.append(f"{entry.display}: {exc.reason}")
                continue
            except (OSError, UnicodeEncodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                errors.append(f"{entry.display}: cannot write the noqa directives: {reason}")
                continue
            rows += added.rows
    return FilesResult(rows, tuple(warnings), tuple(errors))


def run_add_noqa(result: RunResult, files: Sequence[Discovered], seen: dict[str, Snapshot | None]) -> int:
    """`--add-noqa`: write a `# noqa` for every finding; exit 0 unless a file could not be read
    or written."""
    added = add_noqa_to_files(result.reports, files, seen)
    for message in added.warnings:
        print(f"mmalint: warning: {message}", file=sys.stderr)
    print(f"Added {plural(added.rows, 'noqa directive')}.", file=sys.stderr)
    errors = [*result.input_errors, *added.errors]
    for message in errors:
        print_error(message)
    return EXIT_ERROR if errors else EXIT_CLEAN
