"""The edits that turn one text into another, line by line: what fix-all sends, so that an
editor keeps its cursor, folds and marks outside the lines the fixes changed."""

from __future__ import annotations

import difflib

from mmalint.diagnostics import Edit, Location, Range
from mmalint.suppress import split_lines


def line_edits(filename: str, old: str, new: str) -> tuple[Edit, ...]:
    """The fewest whole-line replacements (by difflib) that turn `old` into `new`."""
    a, b = split_lines(old), split_lines(new)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        edits.append(Edit("".join(b[j1:j2]), Range(filename, _start(a, i1), _start(a, i2))))
    return tuple(edits)


def _start(lines: list[str], index: int) -> Location:
    """Where line `index` (0-based) starts; past the last line, the end of the text."""
    if index == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
        return Location(len(lines), len(lines[-1]) + 1)
    return Location(index + 1, 1)
