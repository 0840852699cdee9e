"""An editor's next version of a file parsed from the last one's `ast` tree: the statements
that hold a changed row parsed again, each alone at its rows (of a class, only its edited
members), the others taken as they were. `index_source(keep=True)` and the language server's
re-run of one root (`lsp/rerun.py`) read a 9,888-row test file this way in milliseconds, not the
0.13 s of a whole parse. Nothing here imports or runs what it parses.
"""

from __future__ import annotations

import ast
import bisect
import copy
from collections.abc import Sequence

from mmalint.lines import BLANK_OR_COMMENT, first_row, kept_trees, rows_of

# A text that differs from one kept (`lines.keep_tree`) in at most this many rows, none added or
# removed (the text a fix makes, verified by checking it again), is parsed statement by statement.
_REPARSED_ROWS = 256


def reparsed(text: str) -> ast.Module | None:
    """The `ast` tree of `text` from a kept tree of a text with as many rows, only the top-level
    statements that hold a changed row parsed again (each alone, at its rows: statements start
    afresh, so the whole parses as its parts do); None when no kept text is that close."""
    new_lines = rows_of(text)
    for old_text, old_tree in kept_trees():
        if not isinstance(old_tree, ast.Module) or old_text is text:
            continue
        old_lines = rows_of(old_text)
        if len(old_lines) != len(new_lines):
            continue
        changed = [row for row, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), start=1) if a != b]
        if not changed or len(changed) > _REPARSED_ROWS:
            continue
        return replace_statements(old_tree, new_lines, changed)
    return None


def replace_statements(old: ast.Module, lines: Sequence[str], changed: list[int]) -> ast.Module | None:
    body = list(old.body)
    starts = [first_row(stmt) for stmt in body]
    touched: set[int] = set()
    for row in changed:
        at = bisect.bisect_right(starts, row) - 1
        if at >= 0 and row <= (body[at].end_lineno or body[at].lineno):
            if _shares_a_row(body, starts, at):
                return None  # `a = 1; b = 2`: its rows hold more than it
            touched.add(at)
        elif not BLANK_OR_COMMENT.match(lines[row - 1]):
            return None  # code where there was none between statements: parse it all
    for at in sorted(touched, reverse=True):
        stmt = body[at]
        if isinstance(stmt, ast.ClassDef):
            # A test class of thousands of rows: only its edited members parsed again.
            cls = _replace_members(stmt, lines, changed)
            if cls is not None:
                body[at] = cls
                continue
        first, last = starts[at], body[at].end_lineno or body[at].lineno
        try:
            parsed = ast.parse("".join(lines[first - 1 : last]))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for stmt in parsed.body:
            ast.increment_lineno(stmt, first - 1)
        body[at : at + 1] = parsed.body
    return ast.Module(body=body, type_ignores=[])


def _replace_members(cls: ast.ClassDef, lines: Sequence[str], changed: list[int]) -> ast.ClassDef | None:
    """A copy of the class whose members that hold a changed row are parsed again, each alone
    at its rows (members start afresh, at the class's indentation); None when a changed row
    of code is in the class's header, or between its members."""
    first_row_, last_row = first_row(cls), cls.end_lineno or cls.lineno
    members = list(cls.body)
    starts = [first_row(stmt) for stmt in members]
    touched: set[int] = set()
    for row in changed:
        if not first_row_ <= row <= last_row:
            continue
        at = bisect.bisect_right(starts, row) - 1
        if at >= 0 and row <= (members[at].end_lineno or members[at].lineno):
            if _shares_a_row(members, starts, at):
                return None
            touched.add(at)
        elif at < 0 or not BLANK_OR_COMMENT.match(lines[row - 1]):
            return None
    for at in sorted(touched, reverse=True):
        first, last = starts[at], members[at].end_lineno or members[at].lineno
        parsed = parse_alone("".join(lines[first - 1 : last]), indented=True)
        if parsed is None or any(stmt.col_offset != members[at].col_offset for stmt in parsed[0]):
            return None
        for stmt in parsed[0]:
            ast.increment_lineno(stmt, first - 1 - parsed[1])
        members[at : at + 1] = parsed[0]
    if not members:
        return None
    copied = copy.copy(cls)
    copied.body = members
    # A class ends where its last statement does (an edit may have made that row a comment).
    copied.end_lineno, copied.end_col_offset = members[-1].end_lineno, members[-1].end_col_offset
    return copied


def _shares_a_row(body: list[ast.stmt], starts: list[int], at: int) -> bool:
    """Whether the statement at `at` starts on the row the one before it ends on, or ends on
    the row the next starts on (parsed alone, its rows would give both)."""
    end = body[at].end_lineno or body[at].lineno
    before = at > 0 and (body[at - 1].end_lineno or body[at - 1].lineno) >= starts[at]
    return before or (at + 1 < len(body) and starts[at + 1] <= end)


def parse_alone(rows: str, indented: bool) -> tuple[list[ast.stmt], int] | None:
    """The statements of some rows of a text, parsed alone as they parse in it: indented rows
    (a class's member) inside a made-up `if 1:`. With the rows the wrapper adds before them (0
    or 1), to take from their line numbers; None when they do not parse alone."""
    try:
        tree = ast.parse("if 1:\n" + rows if indented else rows)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not indented:
        return tree.body, 0
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.If):
        return None
    return tree.body[0].body, 1
