"""Applying fixes to source text: non-overlapping edits, positions in code points."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mmalint.diagnostics import Diagnostic, Edit, Fix, Location
from mmalint.suppress import split_lines

_NEWLINE = re.compile(r"\r\n|\r|\n")


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    """Whether `--fix` (safe only) or `--fix --unsafe-fixes` applies this fix."""
    return fix is not None and (fix.applicability == "safe" or unsafe)


def newline_of(text: str) -> str:
    """The file's line ending: that of its first line (\\n for a one-line file)."""
    m = _NEWLINE.search(text)
    return m.group(0) if m else "\n"


class _Offsets:
    def __init__(self, text: str) -> None:
        self.starts = [0]
        for line in split_lines(text):
            self.starts.append(self.starts[-1] + len(line))
        self.size = len(text)

    def __call__(self, where: Location) -> int:
        row = min(max(where.row, 1), len(self.starts) - 1)
        if where.row > len(self.starts) - 1:
            return self.size
        line_end = self.starts[row]
        return min(self.starts[row - 1] + where.column - 1, line_end, self.size)


@dataclass(frozen=True)
class Applied:
    text: str
    applied: tuple[Diagnostic, ...]  # the diagnostics whose fixes went in


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> Applied:
    """Apply every applicable fix whose edits overlap no fix applied before it (in file order).

    A fix is all-or-nothing: its edits go in together or not at all. Fixes left out because of
    an overlap are found again when the caller re-lints the fixed text.
    """
    offsets = _Offsets(text)
    newline = newline_of(text)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    candidates = [d for d in diagnostics if applicable(d.fix, unsafe)]
    candidates.sort(key=lambda d: _first_edit(d.fix) if d.fix else (0, 0))
    for d in candidates:
        assert d.fix is not None
        spans = [(offsets(e.range.start), offsets(e.range.end), e.content) for e in d.fix.edits]
        if any(end < start for start, end, _ in spans):
            continue
        if _overlaps(spans, taken) or _overlaps(spans, [(s, e) for s, e, _ in spans], self_check=True):
            continue
        taken.extend((s, e) for s, e, _ in spans)
        chosen.extend((s, e, _NEWLINE.sub(newline, c)) for s, e, c in spans)
        applied.append(d)
    out = text
    for start, end, content in sorted(chosen, key=lambda x: (x[0], x[1]), reverse=True):
        out = out[:start] + content + out[end:]
    return Applied(out, tuple(applied))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """The text with one fix's edits in (they must not overlap)."""
    offsets = _Offsets(text)
    newline = newline_of(text)
    spans = sorted(
        ((offsets(e.range.start), offsets(e.range.end), e.content) for e in edits),
        key=lambda x: (x[0], x[1]),
        reverse=True,
    )
    for start, end, content in spans:
        text = text[:start] + _NEWLINE.sub(newline, content) + text[end:]
    return text


def _first_edit(fix: Fix) -> tuple[int, int]:
    first = min(fix.edits, key=lambda e: (e.range.start.row, e.range.start.column))
    return (first.range.start.row, first.range.start.column)


def _overlaps(
    spans: list[tuple[int, int, str]], taken: list[tuple[int, int]], self_check: bool = False
) -> bool:
    """Two ranges overlap when they share a character, or both insert at one point."""
    for i, (start, end, _) in enumerate(spans):
        for j, (t_start, t_end) in enumerate(taken):
            if self_check and i == j:
                continue
            if start < t_end and t_start < end:
                return True
            if start == end == t_start == t_end:
                return True
            if (start == end and t_start < start < t_end) or (t_start == t_end and start < t_start < end):
                return True
    return False
