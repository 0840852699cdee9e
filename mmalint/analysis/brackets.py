"""Reading code text around a place, for the mutation scan (`mutations.py`): the bracket or
call an argument is in (its callee, its place or keyword), where a clause starts, a `def`'s
parameters, the function a row is in, the `def` or `class` a decorator decorates, whether a
name is in an annotation or among a class statement's bases. Text scans only: nothing here
parses or runs the code.
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


def bracket_end(text: str, opener: int, within: int = 2000) -> int | None:
    """Where the bracket opened at `opener` closes (just past it); None within `within` characters."""
    depth = 0
    for i in range(opener, min(len(text), opener + within)):
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


def caller_of(text: str, at: int) -> str | None:
    """The callee of the call whose argument starts at `at` (`zip` in `zip(T, U)`,
    `jtu.sample_product` in `jtu.sample_product(dtype=T)`); None where the argument is not
    one (an item of a display, a binding, a lambda's body), or the callee is not a name."""
    start = max(0, at - CALL_REACH)

    def binds(i: int) -> bool:  # `U = T` (a binding, not a keyword argument), a lambda's body
        return text[i] == ":" or (text[i] == "=" and text[i - 1] not in "=!<>" and text[i + 1] != "="
                                  and not ARGUMENT_KEYWORD.search(text, start, i))

    found = call_around(text, at, binds)
    if found is None:
        return None
    callee = CALLEE.search(text, start, found[0])
    return None if callee is None else callee.group(1)


def argument_of(text: str, at: int) -> tuple[str, int, str | None] | None:
    """The call whose argument starts at `at`: its callee (a bare name), the argument's
    place among the positional ones, or its keyword; None for anything else (`*T`, `**T`
    aside, as an argument after them has no place known)."""
    start = max(0, at - CALL_REACH)
    keyword = KEYWORD_BEFORE.search(text, start, at)
    # `U = T`, a lambda's body, a slice: no argument (a keyword's own `=` aside)
    found = call_around(text, at, lambda i: keyword is None and text[i] in ":=")
    if found is None:
        return None
    opener, commas = found
    callee = CALLEE.search(text, start, opener)
    if callee is None or "." in callee.group(1) or callee.group(1) in NOT_CALLS or "*" in text[opener:at]:
        return None
    return callee.group(1), commas, keyword.group(1) if keyword is not None else None


def a_base(text: str, at: int) -> bool:
    """Whether the name at `at` is a base of a class statement over several rows (`class U(`
    / `T, metaclass=M` / `):`), or a keyword's value there."""
    return parenthesized_after(text, clause_start(text, at), _CLASS_HEAD)


_CLASS_HEAD = re.compile(r"(?<![\w.])class[ \t]+\w+[ \t]*\Z")


def parenthesized_after(text: str, clause: int, head: re.Pattern[str]) -> bool:
    """Whether the clause starting at `clause` is just inside a `(` that `head` ends before:
    a `class U(` statement's bases, a `def f(` row's parameters."""
    return text[clause - 1:clause] == "(" and bool(head.search(text, max(0, clause - 200), clause - 1))


def in_annotation(text: str, row: int, at: int) -> bool:
    """Whether the name at `at` is (in) an annotation: `-> T`, a parameter's `x: T` or
    `x: Optional[T]`, a variable's `cfg: T = ...` (not a dict's `{k: T}`, nor `lambda c: T`)."""
    if _RETURNS.search(text, row, at):
        return True
    colon = _ANNOTATED.search(text, row, at)
    if colon is None:
        return False
    clause = clause_start(text, colon.start())
    if clause == row:
        return bool(_VARIABLE_ANNOTATED.match(text, row, colon.end()))  # no bracket around it
    return parenthesized_after(text, clause, _DEF_HEAD)


# `Optional[`, `dict[str, `, `dict[tuple[int, int], ` (brackets closed inside, two deep), and
# one open inside another: `dict[str, Callable[[], `
_OPEN_GENERIC = r"[\w.]+[ \t]*\[(?:[^\[\]=\n]|\[(?:[^\[\]=\n]|\[[^\[\]=\n]*\])*\])*"
_GENERIC = r"(?:" + _OPEN_GENERIC + r"(?:(?<=[\[ ,])" + _OPEN_GENERIC + r")?)?"
_RETURNS = re.compile(r"->[ \t]*" + _GENERIC + r"\Z")
_ANNOTATED = re.compile(r":[ \t]*" + _GENERIC + r"\Z")
_VARIABLE_ANNOTATED = re.compile(r"[ \t]*(?!(?:else|try|finally)[ \t]*:)[\w.]+[ \t]*:")
_DEF_HEAD = re.compile(r"\bdef[ \t]+\w+[ \t]*\Z")


ARGUMENT_KEYWORD = re.compile(r"[(,][ \t\n]*\w+[ \t]*\Z")
