"""The language server's reuse of a document's last lint after an edit that cannot change it.

A lint of a large test file reads a fraction of it: the roots the relevance scan picks, what
they call, and the modules they import (`gpu_test.py`: 93 of its blocks, 28% of its rows). An
edit of any other block changes nothing the analysis found, provided that

- the edit stays inside one block (a top-level statement, or a member of a class), or inside
  the blank and comment rows between blocks, and the module's structure stays as it was: the
  block parses again alone as one statement of the same kind, name, indentation and bound
  names (a statement boundary before and after it, so no row outside it reads otherwise);
- no analysis of the lint read the block's text (`analysis/reads.py`), nor the text of a
  class around it, and no relevance scan counted it, nor would count its new text: it names
  no MMA API, no function, method, class or attribute that leads to one, and imports what it
  imported;
- the rows changed mention none of the words the analysis looked for in the whole text
  (`mentions`), no global mutation (`_mutated_globals`), and no `noqa` or `mmalint` comment
  (the suppressions read those);
- every run of every budget had more steps left than the edit takes away (a budget grows
  with the file's size);
- the configuration, the other open documents and the files the lint read on disk are as
  they were (each file's modification time and size, each directory a scan walked).

Then the last report is the new one, its positions below the edit moved by the rows it added
or removed. The memo travels with the server's record of the document (`Job.memo`), so any
lint process can use it; it is plain data.
"""

from __future__ import annotations

import ast
import os
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from mmalint.analysis import reads as reads_module
from mmalint.analysis.imports import scan_imports
from mmalint.analysis.reads import ScanFacts
from mmalint.analysis.relevance import _QUALIFIED, _names_in, _triggers
from mmalint.analysis.reparse import parse_alone
from mmalint.analysis.source import Block, SourceFile, _bound_names, indent_of
from mmalint.diagnostics import Diagnostic, Edit, FileReport, Location, Range, Related
from mmalint.lines import BLANK_OR_COMMENT, rows_of, split_lines
from mmalint.tree import Observed, digest, probe_answer, walk

# The suppressions read these comments anywhere in the file.
_COMMENT_WORDS = re.compile(r"noqa|mmalint", re.IGNORECASE)


def _mutations(text: str) -> frozenset[tuple[str, str]]:
    """What `_mutated_globals` takes from these rows (its patterns match within a row)."""
    from mmalint.analysis.mutations import mutation_words

    mutated, attribute_stores = mutation_words(text)
    return frozenset({("m", word) for word in mutated} | {("a", word) for word in attribute_stores})


def names_one_of(text: str, names: frozenset[str]) -> bool:
    """Whether `text` names one of `names` (as a word): rows whose edit may change what a scan
    of every use of that name answered."""
    return bool(names) and any(re.search(r"(?<!\w)" + re.escape(name) + r"\b", text) for name in names if name in text)


def text_digest(text: str) -> str:
    return digest(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Entry:
    """A block of the module, as `source.index_source` made it."""

    start: int
    end: int
    indent: int
    kind: str
    name: str | None
    bound: frozenset[str]
    parent: int  # the index of its class's entry, -1 at the top level
    members: tuple[int, ...] = ()


# The files on disk a lint read, and the walks its scans made (`_inputs`).
Inputs = tuple[tuple[str, ...], tuple[tuple[tuple[str, ...], bool], ...]]


@dataclass(frozen=True)
class Memo:
    key: Any  # what the lint was asked besides the text: the same job for another text
    text: str
    entries: tuple[Entry, ...]
    read: frozenset[str]  # digests of the texts of blocks some analysis read
    relevant: frozenset[str]  # digests of the texts of blocks some relevance scan counted
    scans: tuple[ScanFacts, ...]
    words: frozenset[str]
    mutation_scans: bool
    slack: int
    files: tuple[tuple[str, int, int], ...]  # path, mtime_ns, size of each file read or scanned
    dirs: tuple[tuple[str, int], ...]  # path, mtime_ns of each directory a scan walked
    probes: tuple[tuple[str, bool], ...]
    report: FileReport
    others: tuple[tuple[str, str], ...]
    noqa: tuple[Edit | None, ...]
    inputs: Inputs = ((), ())  # what `files` and `dirs` record (`_inputs`)
    uses: frozenset[str] = frozenset()  # names each of whose uses some scan read (`reads.uses`)


# ---------------------------------------------------------------------- making a memo


def make_memo(
    key: Any,
    text: str,
    recorded: reads_module.Reads,
    report: FileReport,
    others: tuple[tuple[str, str], ...],
    noqa: tuple[Edit | None, ...],
    overlays: Iterable[str],
    checked: Memo | None = None,
) -> Memo | None:
    """What a later lint of this document needs to reuse this one; None when it cannot
    (the analysis stopped early, the text did not parse, the tree's record is not whole).
    `checked`: a memo whose files on disk were found as they were a moment ago (`disk_unchanged`):
    when the lint read the same files and directories, their record is taken from it."""
    slack = recorded.slack()
    observed = report.observed if report.observed is not None else Observed()  # None: no tree read
    if slack is None or not report.complete or not recorded.sources or report.error is not None:
        return None
    if not observed.keyed:
        return None
    if any(d.code is None for d in report.diagnostics):
        return None  # a syntax error: there is no index to compare with
    source = recorded.sources[0]
    if source.text != text:
        return None
    with reads_module.paused():
        read = frozenset(_digest_of(b) for b in recorded.blocks)
        relevant = frozenset(_digest_of(b) for scan in recorded.closures for b in scan.relevant)
    scans = tuple(scan.facts for scan in recorded.closures)
    inputs = _inputs(observed, frozenset(overlays))
    if checked is not None and checked.inputs == inputs:
        files, dirs = checked.files, checked.dirs
    else:
        files, dirs = _disk(*inputs)
    probes = tuple(sorted(observed.probes.items()))
    return Memo(
        key, text, _entries(source), read, relevant, scans, frozenset(recorded.words),
        recorded.mutation_scans, slack, files, dirs, probes, replace(report, observed=None), others, noqa, inputs,
        frozenset(recorded.uses),
    )


# Each block's text's digest, by the rows it was taken at: a block's text does not change
# while its rows do not (`rerun._patch` makes an edited block anew), except a class split into
# members, whose text holds theirs. A re-run's memo digests only what the edit made anew.
_DIGESTS: weakref.WeakKeyDictionary[Block, tuple[int, int, str]] = weakref.WeakKeyDictionary()


def _digest_of(block: Block) -> str:
    if block.kind == "class" and block.members:
        return text_digest(block.text)
    found = _DIGESTS.get(block)
    if found is None or found[:2] != (block.start_line, block.end_line):
        found = _DIGESTS[block] = (block.start_line, block.end_line, text_digest(block.text))
    return found[2]


def _entries(source: SourceFile) -> tuple[Entry, ...]:
    found: list[Entry] = []
    for block in source.blocks:
        index = len(found)
        found.append(Entry(block.start_line, block.end_line, block.indent, block.kind, block.name, block.bound_names, -1))
        members = []
        for member in block.members:
            members.append(len(found))
            found.append(Entry(member.start_line, member.end_line, member.indent, member.kind, member.name,
                               member.bound_names, index))
        if members:
            found[index] = replace(found[index], members=tuple(members))
    return tuple(found)


def _stat(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns, info.st_size


def _inputs(observed: Observed, overlays: frozenset[str]) -> Inputs:
    """The files on disk a lint read (not the editor's buffers), and the walks its scans made."""
    paths = set(observed.texts)
    for snapshot in observed.snapshots.values():
        paths.update(snapshot)
    walks = {where for _kind, _arg, where, _snap, _answer in observed.scans.values()}
    return tuple(sorted(paths - overlays)), tuple(sorted(walks))


def _disk(paths: tuple[str, ...], walks: tuple[tuple[tuple[str, ...], bool], ...]) -> tuple[
    tuple[tuple[str, int, int], ...], tuple[tuple[str, int], ...]
]:
    files = []
    for path in paths:
        stat = _stat(path)
        files.append((path, *(stat if stat is not None else (-1, -1))))
    dirs: list[tuple[str, int]] = []
    for tops, packages_only in walks:
        visited: list[str] = []
        for _ in walk(tops, packages_only, visited):
            pass
        for directory in visited:
            stat = _stat(directory)
            dirs.append((directory, stat[0] if stat is not None else -1))
    return tuple(files), tuple(sorted(set(dirs)))


# ---------------------------------------------------------------------- reusing one


def disk_unchanged(memo: Memo) -> bool:
    for path, mtime, size in memo.files:
        stat = _stat(path)
        if (stat if stat is not None else (-1, -1)) != (mtime, size):
            return False
    for directory, mtime in memo.dirs:
        stat = _stat(directory)
        if (stat[0] if stat is not None else -1) != mtime:
            return False
    return all(probe_answer(probe) == answer for probe, answer in memo.probes)


@dataclass(frozen=True)
class Reused:
    report: FileReport
    others: tuple[tuple[str, str], ...]
    noqa: tuple[Edit | None, ...]
    memo: Memo


def reuse(memo: Memo, key: Any, text: str) -> Reused | None:
    """The last lint's result for `text`, if the edits from the memo's text cannot change it."""
    if memo.key != key:
        return None
    if text == memo.text:
        return Reused(memo.report, memo.others, memo.noqa, memo) if disk_unchanged(memo) else None
    old_lines, new_lines = rows_of(memo.text), rows_of(text)
    shrink = len(memo.text) - len(text)
    if shrink > 0 and memo.slack <= 20 * shrink + 64:
        return None  # a smaller file has a smaller budget: some run might stop earlier
    entries = list(memo.entries)
    hunks = _by_block(entries, hunks_between(old_lines, new_lines))
    if hunks is None:
        return None
    for a0, a1, b0, b1, at in hunks:
        old_changed = "".join(old_lines[a0:a1])
        new_changed = "".join(new_lines[b0:b1])
        if _COMMENT_WORDS.search(old_changed) or _COMMENT_WORDS.search(new_changed):
            return None
        if not _plain(new_changed) or not _plain(old_changed):
            return None
        if any(w in old_changed or w in new_changed for w in memo.words):
            return None
        if memo.mutation_scans and _mutations(old_changed) != _mutations(new_changed):
            return None
        if names_one_of(old_changed, memo.uses) or names_one_of(new_changed, memo.uses):
            return None
        if at is None or (entries[at].kind == "class" and entries[at].members):
            # Between blocks (or a class's members): only blank and comment rows, then and now.
            if not (_blank_or_comments(old_changed) and _blank_or_comments(new_changed)):
                return None
        elif not _block_edit_holds(memo, entries[at], entries, old_lines, new_lines, b0 - a0, (b1 - b0) - (a1 - a0)):
            return None
    if not disk_unchanged(memo):
        return None
    moves = tuple((a0, a1, (b1 - b0) - (a1 - a0)) for a0, a1, b0, b1, _ in hunks)
    moved = tuple(replace(e, start=_after(e.start, moves), end=_within(e.end, moves)) for e in entries)
    filename = memo.report.filename
    report = _shift(memo.report, filename, moves)
    noqa = tuple(None if e is None else _shift(e, filename, moves) for e in memo.noqa)
    new_memo = replace(memo, text=text, entries=moved, report=report, noqa=noqa)
    return Reused(report, memo.others, noqa, new_memo)


# Rows compared for the diff to find the two texts in step again, after a difference.
_RESYNC_ROWS = 3
_RESYNC_WINDOW = 64


def hunks_between(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """The rows that differ, as hunks (old `a0:a1` became new `b0:b1`), in order; the rows
    between them are equal. Not a minimal diff: where the texts fall out of step for more
    than a few rows, one hunk runs to the end (which then reuses nothing)."""
    found: list[tuple[int, int, int, int]] = []
    i = j = 0
    n, m = len(old), len(new)
    while i < n and j < m:
        if old[i] == new[j]:
            i += 1
            j += 1
            continue
        step = _resync(old, new, i, j)
        if step is None:
            break
        x, y = step
        found.append((i, i + x, j, j + y))
        i, j = i + x, j + y
    if i < n or j < m:
        found.append((i, n, j, m))
    return found


def _resync(old: Sequence[str], new: Sequence[str], i: int, j: int) -> tuple[int, int] | None:
    """The fewest rows (x of old, y of new) after which the texts agree for a few rows again
    (or both end)."""
    n, m = len(old), len(new)
    for total in range(1, 2 * _RESYNC_WINDOW):
        for x in range(max(0, total - _RESYNC_WINDOW), min(total, _RESYNC_WINDOW) + 1):
            y = total - x
            a, b = i + x, j + y
            if a > n or b > m:
                continue
            # A few equal rows ahead, or equal rows to the end of both.
            room = min(n - a, m - b) >= _RESYNC_ROWS or n - a == m - b
            if room and old[a : a + _RESYNC_ROWS] == new[b : b + _RESYNC_ROWS]:
                return x, y
    return None


def _by_block(
    entries: list[Entry], hunks: list[tuple[int, int, int, int]]
) -> list[tuple[int, int, int, int, int | None]] | None:
    """Each hunk with the innermost block that holds it (None: between blocks), hunks in one
    block merged; None when a hunk is in a class's header, or spans blocks."""
    merged: list[tuple[int, int, int, int, int | None]] = []
    for a0, a1, b0, b1 in hunks:
        at = _innermost(entries, a0 + 1, a1)
        if at is not None and entries[at].kind == "class" and entries[at].members:
            if a0 + 1 <= entries[entries[at].members[0]].start:
                return None  # in a class's header, or rows added before its first member
        elif at is None and any(e.start <= a1 and a0 + 1 <= e.end for e in entries if e.parent == -1):
            return None  # over a block's edge
        if merged and at is not None and merged[-1][4] == at:
            p0, _, q0, _, _ = merged[-1]
            merged[-1] = (p0, a1, q0, b1, at)
        else:
            merged.append((a0, a1, b0, b1, at))
    return merged


def _after(row: int, moves: tuple[tuple[int, int, int], ...]) -> int:
    """Where an old row outside every hunk (or a block's first row) is now."""
    return row + sum(delta for _a0, a1, delta in moves if row > a1)


def _within(row: int, moves: tuple[tuple[int, int, int], ...]) -> int:
    """Where a block's last row is now: a hunk inside the block moves it too."""
    return row + sum(delta for a0, _a1, delta in moves if row > a0)


def _innermost(entries: list[Entry], first: int, last: int) -> int | None:
    """The innermost block holding rows first..last (an insertion between two rows: holding
    both of them)."""
    low, high = (first, last) if last >= first else (first - 1, first)
    found = None
    for i, entry in enumerate(entries):
        if entry.start <= low and high <= entry.end:
            found = i  # a member comes after its class
    return found


_TAB_INDENT = re.compile(r"^[ ]*[\t\f]", re.MULTILINE)


def _plain(rows: str) -> bool:
    """Rows whose reading cannot depend on the rest of the file: indented with spaces only
    (Python compares tabs and spaces across rows: `inconsistent use of tabs`), and text that
    Python can encode (a lone surrogate from an editor fails the whole file)."""
    if _TAB_INDENT.search(rows):
        return False
    try:
        rows.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _blank_or_comments(text: str) -> bool:
    return all(BLANK_OR_COMMENT.match(row) for row in split_lines(text))


def _block_edit_holds(
    memo: Memo, entry: Entry, entries: list[Entry], old_lines: Sequence[str], new_lines: Sequence[str],
    offset: int, delta: int,
) -> bool:
    """Whether one block's edit (its rows now `offset` rows further, `delta` more of them)
    leaves everything the lint found as it was."""
    start = entry.start + offset
    end = entry.end + offset + delta
    if end < start:
        return False
    old_text = "".join(old_lines[entry.start - 1 : entry.end])
    new_text = "".join(new_lines[start - 1 : end])
    digest = text_digest(old_text)
    if digest in memo.read or digest in memo.relevant:
        return False
    parent = entry.parent
    while parent != -1:  # a class read whole reads its members
        outer = entries[parent]
        if text_digest("".join(old_lines[outer.start - 1 : outer.end])) in memo.read:
            return False
        parent = outer.parent
    if entry.kind == "stmt" and (_is_import(old_text) or _is_import(new_text)):
        return False
    if not _parses_alike(entry, new_text):
        return False
    if ("import" in old_text or "import" in new_text) and scan_imports(old_text) != scan_imports(new_text):
        return False
    if _triggers(old_text, frozenset(), strict=True) or _triggers(new_text, frozenset(), strict=True):
        # The whole text's "does it use an MMA API" (`program._uses_api`, which the callers'
        # questions ask of this file) counts every module's words, foreign or not.
        return False
    bare, attrs, called = _names_in(new_text)
    qualified = _QUALIFIED.findall(new_text)
    for scan in memo.scans:
        if _triggers(new_text, scan.foreign):
            return False
        if any(attr in scan.qualified.get(alias, ()) for alias, attr in qualified):
            return False
        if not (scan.bare.isdisjoint(bare) and scan.methods.isdisjoint(attrs) and scan.classes.isdisjoint(called)):
            return False
    return True


def _is_import(text: str) -> bool:
    return text.lstrip().startswith(("import ", "from "))


def _parses_alike(entry: Entry, text: str) -> bool:
    """Whether the block's new text is one statement of the block's kind, name, indentation
    and bound names, from its first row to its last (so no row around it reads otherwise)."""
    if not text or indent_of(text) != entry.indent:
        return False
    parsed = parse_alone(text, indented=entry.indent != 0)
    if parsed is None or len(parsed[0]) != 1:
        return False
    stmt, offset = parsed[0][0], parsed[1]
    decorators = getattr(stmt, "decorator_list", None) or []
    first = min([stmt.lineno, *(d.lineno for d in decorators)]) - offset
    rows = len(split_lines(text))
    if first != 1 or (stmt.end_lineno or 0) - offset != rows:
        return False
    kind = "def" if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) else (
        "class" if isinstance(stmt, ast.ClassDef) else "stmt")
    name = getattr(stmt, "name", None) if kind != "stmt" else None
    if kind != entry.kind or name != entry.name or _bound_names(stmt) != entry.bound:
        return False
    # A class kept whole stays whole: one split into members would be indexed otherwise.
    return kind != "class"


# ---------------------------------------------------------------------- moving positions


Moves = tuple[tuple[int, int, int], ...]


def _shift(value: Any, filename: str, moves: Moves) -> Any:
    """`value` with each position in `filename` moved by the hunks (`moves`: old rows
    `a0+1..a1` changed, `delta` rows more)."""
    if all(delta == 0 for _a0, _a1, delta in moves):
        return value
    if isinstance(value, Range):
        if value.filename != filename:
            return value
        return Range(value.filename, _location(value.start, moves), _location(value.end, moves))
    if isinstance(value, Related):
        moved = _shift(value.range, filename, moves)
        message = value.message
        if value.range.filename == filename and moved.start.row != value.range.start.row:
            label = re.escape(f"{os.path.basename(filename)}:{value.range.start.row}")
            message = re.sub(label + r"(?!\d)", f"{os.path.basename(filename)}:{moved.start.row}", message)
        return Related(message, moved)
    if isinstance(value, Diagnostic):
        moved = _shift_fields(value, filename, moves)
        if value.statement_rows is not None and value.range.filename == filename:
            a, b = value.statement_rows
            moved = replace(moved, statement_rows=(_after(a, moves), _after(b, moves)))
        return moved
    if is_dataclass(value) and not isinstance(value, type):
        return _shift_fields(value, filename, moves)
    if isinstance(value, tuple):
        return tuple(_shift(v, filename, moves) for v in value)
    if isinstance(value, list):
        return [_shift(v, filename, moves) for v in value]
    if isinstance(value, dict):
        if value.get("filename") == filename:
            return {
                k: (dict(v, row=_after(v["row"], moves)) if k in ("location", "end_location")
                    and isinstance(v, dict) and isinstance(v.get("row"), int) else _shift(v, filename, moves))
                for k, v in value.items()
            }
        return {k: _shift(v, filename, moves) for k, v in value.items()}
    return value


def _shift_fields(value: Any, filename: str, moves: Moves) -> Any:
    changes = {}
    for f in fields(value):
        if not f.init or f.name == "observed":
            continue
        old = getattr(value, f.name)
        new = _shift(old, filename, moves)
        if new is not old:
            changes[f.name] = new
    return replace(value, **changes) if changes else value


def _location(where: Location, moves: Moves) -> Location:
    row = _after(where.row, moves)
    return where if row == where.row else replace(where, row=row)
