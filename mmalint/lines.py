"""Lines as Python, libcst and LSP count them: the one split of a text into rows."""

from __future__ import annotations

import ast
import functools
import itertools
import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# A row that holds no code: blank, or only a comment.
BLANK_OR_COMMENT = re.compile(r"[ \t\f]*(#.*)?\r?\n?\Z")


def split_lines(text: str) -> list[str]:
    """Lines as Python, libcst and LSP count them: `str.splitlines` also splits on form feeds and
    U+2028, which would shift every row after them."""
    return _LINE.findall(text)


@functools.lru_cache(maxsize=4)
def rows_of(text: str) -> tuple[str, ...]:
    """`split_lines`, once per text, for readers only: the language server's steps after an
    edit (its reuse, its re-run, the statements parsed again, the suppressions) each read the
    last text's rows and the new text's (10,000 rows: 3 ms a split)."""
    return tuple(_LINE.findall(text))


# The module trees Python's `ast` made of the last texts checked (`engine.check_text`: the file,
# the texts its fixes would make): the suppressions ask the file's text for its statements'
# rows (`suppress._Statements`), a second parse of a large file otherwise. `forget_trees`
# lets all but the file's own go once the file is done; their statements' row ranges
# (`regions_of`) stay longer, for the noqa edits made after the check.
_trees: list[tuple[str, object]] = []
_regions: list[tuple[str, list[tuple[int, int]]]] = []
_KEPT_TREES = 4


def keep_tree(text: str, tree: object, regions: list[tuple[int, int]] | None = None) -> None:
    """Keep a text's tree, and its statements' rows (`regions`, when the caller has them)."""
    _trees.append((text, tree))
    del _trees[:-_KEPT_TREES]
    if isinstance(tree, ast.Module):
        keep_regions(text, regions if regions is not None else statement_regions(tree))


def keep_regions(text: str, regions: list[tuple[int, int]]) -> None:
    """The statements' row ranges of a text whose tree is not kept (a checked file that an
    earlier program of the process indexed: `engine.indexed_by`)."""
    _regions.append((text, regions))
    del _regions[:-_KEPT_TREES]


def kept_trees() -> list[tuple[str, object]]:
    """The kept (text, tree) pairs, the latest first."""
    return list(reversed(_trees))


def tree_of(text: str) -> object | None:
    for kept, tree in _trees:
        if kept is text:
            return tree
    return None


def forget_trees() -> None:
    """The file is done: only its own text's tree stays (the first kept), from which the next
    version of it (an editor's) is parsed statement by statement (`analysis.reparse`)."""
    del _trees[1:]


def regions_of(text: str) -> list[tuple[int, int]] | None:
    """The row ranges of the text's top-level statements, a class's members on their own and
    its header apart: places where Python's tokenizer starts afresh, so that a region
    tokenizes alone as it does in the file. None when the text is not one kept."""
    for kept, regions in _regions:
        if kept is text:
            return regions
    return None


def first_row(stmt: ast.stmt) -> int:
    """A statement's first row: its first decorator's, or its own."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", None) or [])])


def statement_regions(tree: ast.Module) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for stmt in tree.body:
        start, end = first_row(stmt), stmt.end_lineno or stmt.lineno
        body = stmt.body if isinstance(stmt, ast.ClassDef) else []
        if body and first_row(body[0]) > stmt.lineno and all(
                first_row(b) > (a.end_lineno or a.lineno) for a, b in itertools.pairwise(body)):
            found.append((start, first_row(body[0]) - 1))
            found.extend((first_row(m), m.end_lineno or m.lineno) for m in body)
        else:
            found.append((start, end))
    return found
