"""Syntax newer than the running Python's, read as an older Python reads it, for the index.

The index (`source.index_source`) takes from Python's `ast` only the rows of the statements
and the names they bind; a Python older than the checked code refuses PEP 695's type
parameters and PEP 701's f-strings, and libcst (which reads them) is some 15 times slower. So
the parameters are blanked and such f-strings made plain strings of their length, each on its
row, and `ast` reads the rest; what cannot be read this way is left to libcst.
"""

from __future__ import annotations

import ast
import re

from mmalint.lines import split_lines

# An f-string nested deeper than this in another is left to libcst (and so, past what libcst
# can visit, to the syntax error Python reports): real code nests two or three.
MAX_FSTRING_NESTING = 16


# PEP 695 (Python 3.12): `def f[T](`, `class C[T]`, `type Alias[T] = ...`, which an older
# Python's `ast` refuses. For the index only the rows of statements count, so the brackets can
# go (blanked: on one row only), and an alias can read as an expression.
_TYPE_PARAMS_AFTER = re.compile(r"\b(?:def|class)[ \t]+[^\W\d]\w*[ \t]*(?=\[)")
_TYPE_ALIAS = re.compile(r"^([ \t]*)type[ \t]+([^\W\d]\w*[ \t]*(?:\[[^\]\n]*\])?)[ \t]*=(?!=)", re.MULTILINE)


def _type_parameters_erased(text: str) -> str | None:
    """`text` with PEP 695's type parameters blanked out and its aliases read as expressions;
    None when it has none, or one that cannot be blanked on its row."""
    chars = list(text)
    changed = False
    for match in _TYPE_PARAMS_AFTER.finditer(text):
        depth, i = 0, match.end()
        while i < len(chars):
            char = text[i]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth != 0 or "\n" in text[match.end() : i] or "\r" in text[match.end() : i]:
            return None  # over rows: blanked, the rows would break the statement (libcst reads it)
        for j in range(match.end(), i + 1):
            chars[j] = " "
        changed = True
    erased = "".join(chars)
    # `type X[T] = ...`: as the expression `X[T] == ...`, which binds nothing, as the index
    # binds nothing for an alias where Python reads it (`_bound_names` knows no TypeAlias).
    aliased = _TYPE_ALIAS.sub(lambda m: m.group(1) + m.group(2) + " ==", erased)
    changed = changed or aliased != erased
    return aliased if changed else None


# PEP 701 (Python 3.12): an f-string may hold its own quotes (`f"{", ".join(x)}"`), which an
# older Python's `ast` refuses (libcst reads the module instead, some 15 times slower: jax's
# tcgen05.py took 0.45 s). For the index such an f-string reads as a plain string of its
# length: the rows of statements are what the index takes from `ast`.
_STRING_PREFIX = re.compile(r"(?<![\w])([rRbBuUfF]{0,2})$")
_FSTRING_START = re.compile(r"(?:[fF][rR]?|[rR][fF])[\"']")


def without_newer_syntax(text: str) -> ast.Module | None:
    """The `ast` tree of `text` read as an older Python reads it, for the index's rows: PEP
    695's type parameters blanked, PEP 701's f-strings made plain strings. None when it has
    neither or still does not parse (a construct over rows, other syntax: libcst reads it)."""
    lines = split_lines(text)  # with their ends: rows as Python counts them
    changed = False
    for i, line in enumerate(lines):
        if _FSTRING_START.search(line):
            plain = plain_fstrings(line)
            if plain is not None and plain != line:
                lines[i] = plain
                changed = True
    joined = "".join(lines)
    erased = _type_parameters_erased(joined)
    if erased is None and not changed:
        return None
    try:
        return ast.parse(erased if erased is not None else joined)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def plain_fstrings(line: str) -> str | None:
    """`line` with each f-string on it that only Python 3.12 reads (its own quote or a
    backslash in a replacement field) a plain string of its length; None when a string does
    not end on the row (a triple-quoted one, a backslash before the newline)."""
    out: list[str] = []
    i = 0
    while i < len(line):
        char = line[i]
        if char == "#":
            out.append(line[i:])
            break
        if char not in "'\"":
            out.append(char)
            i += 1
            continue
        letters = _prefix(line, i)
        found = _string_end(line, i, "f" in letters, "r" in letters)
        if found is None:
            return None
        end, newer = found
        if newer:
            start = i - len(letters)
            del out[len(out) - len(letters):]  # the prefix's letters, appended one by one
            out.append('"' + " " * (end - start - 2) + '"')
        else:
            out.append(line[i:end])
        i = end
    return "".join(out)


def _prefix(line: str, quote_at: int) -> str:
    """The letters before the string that opens at `quote_at` (`rf`, `b`, ""), lower case."""
    found = _STRING_PREFIX.search(line, 0, quote_at)
    return found.group(1).lower() if found is not None else ""


def _string_end(line: str, start: int, formatted: bool, raw: bool, nesting: int = 0) -> tuple[int, bool] | None:
    """The index after the string whose opening quote is at `start` (one row only), reading an
    f-string's replacement fields as PEP 701 does (nested strings, brackets), and whether it
    needs PEP 701 (its quote or a backslash in a field, or such an f-string in one); None when
    the row ends first, or it nests f-strings deeper than `MAX_FSTRING_NESTING`."""
    if nesting > MAX_FSTRING_NESTING:
        return None
    quote = line[start]
    if line.startswith(quote * 3, start):
        return None  # triple-quoted: may go on over rows
    i = start + 1
    depth = 0
    newer = False
    while i < len(line):
        char = line[i]
        if char in "\r\n":
            return None
        if depth == 0:
            if char == "\\" and not raw:
                i += 2
                continue
            if char == quote:
                return i + 1, newer
            if formatted and char == "{":
                if line.startswith("{{", i):
                    i += 2
                    continue
                depth = 1
            elif formatted and char == "}" and line.startswith("}}", i):
                i += 2
                continue
            i += 1
            continue
        if char == "\\":
            newer = True
            i += 1
            continue
        if char in "'\"":
            newer = newer or char == quote
            letters = _prefix(line, i)
            found = _string_end(line, i, "f" in letters, "r" in letters, nesting + 1)
            if found is None:
                return None
            i, inner = found
            newer = newer or inner
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        i += 1
    return None
