"""Reading code text around a place, for the mutation scan (`mutations.py`): the bracket or
call an argument is in, where a clause starts, a `def`'s parameters, the function a row is in,
the `def` a decorator decorates. Text scans only: nothing here parses or runs the code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

CALL_REACH = 400  # how far back a scan looks for the bracket around a place
# A callee's dotted name just before its `(`; a keyword argument's `name=` just before a
# value; the words a `(` may follow that make no call.
CALLEE = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)[ \t]*\Z")
KEYWORD_BEFORE = re.compile(r"[(,][ \t\n]*(\w+)[ \t]*=[ \t]*\Z")
NOT_CALLS = frozenset({"if", "elif", "while", "for", "in", "not", "and", "or", "return", "yield", "assert", "print",
                       "lambda", "await", "del", "is"})
SPACES = re.compile(r"[ \t]*")
# A `def` row (its indent as group 1); one up to its `(`; a decorator's row up to its callee.
DEF_ROW = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]", re.MULTILINE)
DEF_HEAD_ROW = re.compile(r"([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(")
CLASS_HEAD_ROW = re.compile(r"([ \t]*)class[ \t]+\w+[ \t]*[(:]")
DECORATOR_ROW = re.compile(r"[ \t]*@[ \t]*\Z")


@functools.cache
def TOP_LEVEL_DEF(name: str) -> re.Pattern[str]:
    """A module's top-level `def name(` (up to its `(`)."""
    return re.compile(r"^(?:async[ \t]+)?def[ \t]+" + re.escape(name) + r"[ \t]*\(", re.MULTILINE)


@functools.cache
def DEDENT_TO(indent: int) -> re.Pattern[str]:
    """A row of code indented `indent` columns or fewer (the end of a block at that depth)."""
    return re.compile(r"^[ \t]{0,%s}(?=[^ \t\n])" % indent, re.MULTILINE)  # noqa: UP031


def call_around(text: str, at: int, stops: Callable[[int], bool]) -> tuple[int, int] | None:
    """Where the `(` of the call whose argument starts at `at` is, and how many arguments come
    before it (its commas): scanning back over balanced brackets; None where the argument is an
    item of a display (`[T, U]`: a new list that holds T), or `stops` says so of a character
    outside brackets."""
    found = bracket_around(text, at, stops)
    return found if found is not None and text[found[0]] == "(" else None


def bracket_around(text: str, at: int, stops: Callable[[int], bool]) -> tuple[int, int] | None:
    """Where the bracket the item that starts at `at` is in opens (a call's or a display's), and
    how many items come before it: scanning back over balanced brackets; None where `stops` says
    so of a character outside brackets first."""
    depth, commas = 0, 0
    for i in range(at - 1, max(0, at - CALL_REACH) - 1, -1):
        char = text[i]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth:
                depth -= 1
                continue
            return i, commas
        elif not depth:
            if char == ",":
                commas += 1
            elif stops(i):
                return None
    return None


def bracket_end(text: str, opener: int) -> int | None:
    """Where the bracket opened at `opener` closes (just past it); None within 2,000 characters."""
    depth = 0
    for i in range(opener, min(len(text), opener + 2000)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if not depth:
                return i + 1
    return None


def clause_start(text: str, at: int) -> int:
    """Where the clause around `at` starts: past the bracket it is in (a comprehension over
    rows), else its row."""
    depth = 0
    for i in range(at - 1, max(0, at - CALL_REACH) - 1, -1):
        char = text[i]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if not depth:
                return i + 1  # (the text before it is balanced: only a bracket `at` is in)
            depth -= 1
    return text.rfind("\n", 0, at) + 1


def parameters(text: str, at: int) -> tuple[list[str], int] | None:
    """The parameters of the `def` whose `(` ends just before `at`, in order (`*args`,
    `**kw` with their stars), and where the parameter list ends; None past 2,000 characters."""
    depth = 0
    current: list[str] = []
    params: list[str] = []
    for i in range(at, min(len(text), at + 2000)):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if not depth:
                params.append("".join(current))
                end = i + 1
                break
            depth -= 1
        elif char == "," and not depth:
            params.append("".join(current))
            current = []
            continue
        current.append(char)
    else:
        return None
    names = []
    for param in params:
        found = re.match(r"[ \t\n]*(\*{0,2}[ \t]*\w*)", param)
        name = found.group(1).replace(" ", "") if found else ""
        if name and name != "/":
            names.append(name)
    return names, end


def function_span(text: str, row: int) -> tuple[int, int] | None:
    """Where the function whose body holds the row starting at `row` starts and ends (its
    `def` row to the last row indented under it); None at module level."""
    indent = len(text[row:]) - len(text[row:].lstrip(" \t"))
    for head in reversed(list(DEF_ROW.finditer(text, 0, row))):
        own = len(head.group(1))
        if own < indent:
            stop = block_end(text, head)
            if stop > row:
                return head.start(), stop
            indent = own  # ended above the row: only a block less indented may hold it
        if own == 0:
            break
    return None


def block_end(text: str, head: re.Match[str]) -> int:
    """Where the block a `def` row (`head`, its indent as group 1) opens ends: the next row of
    code indented no deeper than the row, or the end of the text."""
    below = DEDENT_TO(len(head.group(1))).search(text, head.end())
    return below.start() if below is not None else len(text)


def decorated(text: str, at: int, indent: int, heads: re.Pattern[str] = DEF_HEAD_ROW) -> re.Match[str] | None:
    """The `def` row (`DEF_HEAD_ROW`, up to its `(`; a `class` row with `CLASS_HEAD_ROW`) that a
    decorator ending at `at`, on a row indented `indent` columns, decorates: past other
    decorators at that indent and rows indented deeper (their arguments); None where anything
    else comes first."""
    row = text.find("\n", at) + 1
    while 0 < row < len(text):
        head = heads.match(text, row)
        own = len(SPACES.match(text, row).group())  # type: ignore[union-attr]
        if head is not None and own == indent:
            return head
        if not (own > indent or text[row + own:row + own + 1] in ("@", ")", "]", "\n")):
            return None
        row = text.find("\n", row) + 1
    return None
