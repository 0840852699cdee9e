"""What the fixes did and can do, in words: `--fix-only`'s one line, the list of applied fixes
of `--show-fixes`, and each fix as a diff under its finding in `--format full --show-fixes`."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from mmalint.diagnostics import Diagnostic, Edit
from mmalint.fixes.apply import apply_edits
from mmalint.report import REPORTERS

if TYPE_CHECKING:
    from rich.console import Console

SourceLines = Callable[[str], list[str] | None]


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and `word`, plural as English wants it ("1 error", "2 hidden fixes")."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def hidden_note(hidden: int) -> str:
    """The summary's note on unsafe fixes left out, shared with `mmalint check`'s summary."""
    return f"{plural(hidden, 'hidden fix', 'hidden fixes')} can be enabled with the `--unsafe-fixes` option"


def fix_only_summary(fixed: int, hidden: int) -> str:
    """`--fix-only`'s report: how many were fixed, and the unsafe fixes left out (ruff's line)."""
    if fixed:
        return f"Fixed {plural(fixed, 'error')}" + (f" ({hidden_note(hidden)})." if hidden else ".") + "\n"
    if hidden:
        return f"No errors fixed ({hidden_note(hidden)}).\n"
    return ""


def fixed_listing(per_file: Iterable[tuple[str, Counter[str]]], names: Mapping[str, str]) -> str:
    """`--show-fixes` after `--fix`: the fixes applied, per file and rule, most frequent first."""
    files = [(name, counts) for name, counts in per_file if sum(counts.values())]
    if not files:
        return ""
    total = sum(sum(counts.values()) for _, counts in files)
    lines = ["", f"Fixed {plural(total, 'error')}:"]
    for name, counts in files:
        lines.append(f"- {name}:")
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            if n:
                lines.append(f"    {n} × {code} ({names.get(code, code)})")  # noqa: RUF001 (ruff's sign)
    return "\n".join(lines) + "\n\n"


def full_with_fix_diffs(diagnostics: list[Diagnostic], source_lines: SourceLines, color: bool) -> str:
    """`--format full` with each finding's fix shown as a diff under it."""
    render = REPORTERS["full"]
    parts: list[str] = []
    for d in diagnostics:
        block = render([d], source_lines, color)
        diff = fix_diff(d, source_lines)
        if diff:
            # A finding's block ends with an empty line; the diff goes just above it.
            ending = "\n" if block.endswith("\n\n") else ""
            block = block[: len(block) - len(ending)] + _draw_diff(diff, color) + ending
        parts.append(block)
    return "".join(parts)


def fix_diff(d: Diagnostic, source_lines: SourceLines) -> list[str]:
    """The unified diff (hunks only, one line of context) of applying `d`'s fix alone."""
    if d.fix is None:
        return []
    by_file: dict[str, list[Edit]] = {}
    for edit in d.fix.edits:
        by_file.setdefault(edit.range.filename, []).append(edit)
    out: list[str] = []
    for filename, edits in by_file.items():
        lines = source_lines(filename)
        if lines is None:
            continue
        before = "".join(lines)
        after = apply_edits(before, edits)
        hunks = difflib.unified_diff(
            before.splitlines(), after.splitlines(), fromfile=filename, tofile=filename, n=1, lineterm=""
        )
        body = [line for line in hunks if not line.startswith(("---", "+++"))]
        if body and len(by_file) > 1:
            out.append(f"--- {filename}")
        out.extend(body)
    return out


def _draw_diff(lines: list[str], color: bool) -> str:
    # rich only here: the summary line (`plural`) of a check that finds nothing needs none of it.
    from rich.text import Text

    from mmalint.report.style import render_text

    styles = {"-": "red", "+": "green", "@": "cyan"}

    def draw(console: Console) -> None:
        for line in lines:
            console.print(Text(("    " + line).rstrip(), style=styles.get(line[:1], "")), soft_wrap=True)

    return render_text(draw, color)
