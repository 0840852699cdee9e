"""The edits made to a document since its last analysis, and where that analysis's findings are now.

A quick fix computed for an older text is only offered if the edits since then left its ranges
alone: a range wholly before an edit stays, one wholly after it moves by what the edit added or
removed, one an edit overlaps or touches is dropped, since its text may no longer be what the
fix was computed for. Offsets count code points in the whole text; LSP positions (UTF-16 by
default) are converted at the edges.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from lsprotocol import types as lsp

from mmalint.diagnostics import Diagnostic, Edit, Location, Range
from mmalint.suppress import split_lines


@dataclass(frozen=True)
class Change:
    """`text[start:end]` (offsets in the text before the change) became `length` code points."""

    start: int
    end: int
    length: int

    def map(self, start: int, end: int) -> tuple[int, int] | None:
        """Where `[start, end]` is after this change; None if the change touches it."""
        if end < self.start:
            return start, end
        if start > self.end:
            delta = self.length - (self.end - self.start)
            return start + delta, end + delta
        return None


def changed_span(old: str, new: str) -> Change:
    """The one span that turns `old` into `new`: all but their common prefix and suffix."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return Change(prefix, len(old) - suffix, len(new) - suffix - prefix)


def _units(s: str, encoding: str) -> int:
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(s.encode("utf-8"))
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(s)
    return len(s.encode("utf-16-le")) // 2


def lsp_offset(text: str, position: lsp.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (past the end: the end, as editors clamp)."""
    lines = split_lines(text)
    if position.line >= len(lines):
        return len(text)
    offset = sum(len(line) for line in lines[: position.line])
    line = lines[position.line].rstrip("\r\n")
    chars = 0
    while chars < len(line) and _units(line[: chars + 1], encoding) <= position.character:
        chars += 1
    return offset + chars


def apply_change(
    text: str, change: lsp.TextDocumentContentChangeEvent, encoding: str
) -> tuple[str, Change]:
    """The text after one LSP content change, and the change as offsets in `text`."""
    if isinstance(change, lsp.TextDocumentContentChangePartial):
        start = lsp_offset(text, change.range.start, encoding)
        end = max(start, lsp_offset(text, change.range.end, encoding))
        return text[:start] + change.text + text[end:], Change(start, end, len(change.text))
    return change.text, changed_span(text, change.text)


class Offsets:
    """mmalint locations (1-based rows and code-point columns) to offsets in a text and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for line in split_lines(text):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, where: Location) -> int:
        row = min(max(where.row - 1, 0), len(self.starts) - 1)
        return min(self.starts[row] + max(where.column - 1, 0), len(self.text))

    def location(self, offset: int) -> Location:
        row = max(bisect.bisect_right(self.starts, offset) - 1, 0)
        if row == len(self.starts) - 1 and row > 0 and offset == self.starts[row] and not self.text.endswith(("\n", "\r")):
            row -= 1  # the end of a last line without a newline
        return Location(row + 1, offset - self.starts[row] + 1)


class Moves:
    """Maps ranges of the analysed text through the changes made since, onto the current text."""

    def __init__(self, old: str, new: str, changes: tuple[Change, ...]) -> None:
        self.old, self.new = Offsets(old), Offsets(new)
        self.changes = changes

    def range(self, where: Range) -> Range | None:
        span: tuple[int, int] | None = (self.old.offset(where.start), self.old.offset(where.end))
        for change in self.changes:
            if span is None:
                return None
            span = change.map(*span)
        if span is None:
            return None
        return Range(where.filename, self.new.location(span[0]), self.new.location(span[1]))

    def edit(self, edit: Edit) -> Edit | None:
        moved = self.range(edit.range)
        return None if moved is None else Edit(edit.content, moved)

    def diagnostic(self, d: Diagnostic) -> Diagnostic | None:
        """The finding with every range moved; None if an edit touched its range or its fix."""
        moved = self.range(d.range)
        if moved is None:
            return None
        fix = d.fix
        if fix is not None:
            edits = tuple(self.edit(e) for e in fix.edits)
            fix = None if any(e is None for e in edits) else replace(fix, edits=tuple(e for e in edits if e is not None))
        related = []
        for r in d.related:
            if r.range.filename != d.filename:
                related.append(r)
            elif (where := self.range(r.range)) is not None:  # a note on an edited line goes
                related.append(replace(r, range=where))
        return replace(d, range=moved, fix=fix, related=tuple(related), statement_rows=None)
