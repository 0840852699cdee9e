"""A file's import statements, from a scan of its lines (no parse): what the checked tree's
import graph is drawn from (`program.Program.edges`), and what the callers of a module are
looked for by (`import_words`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

_IDENTIFIER = re.compile(r"[^\W\d]\w*\Z")


@dataclass(frozen=True)
class ImportStmt:
    """One import statement of a file, from a scan of its text (no parse)."""

    level: int  # leading dots of `from ..x import y`; 0 for absolute imports and `import x`
    module: str  # `x.y` of `from x.y import ...` / `import x.y` ("" for `from . import y`)
    names: tuple[tuple[str, str | None], ...]  # (name, as-name) of `from ... import`; () for `import`
    asname: str | None = None  # `import x.y as z`



_IMPORTS_CACHE: dict[str, tuple[ImportStmt, ...]] = {}  # by text
_IMPORTS_CACHE_LIMIT = 50_000
_IMPORT_START = re.compile(r"^[ \t]*(from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import\b|import[ \t]+)", re.MULTILINE)


def scan_imports(text: str) -> tuple[ImportStmt, ...]:
    """The import statements of a text, from its lines (an over-approximation: an import in a
    docstring counts too); a statement this scan cannot read is skipped."""
    found: list[ImportStmt] = []
    for match in _IMPORT_START.finditer(text):
        rest = _logical_rest(text, match.end())
        if match.group(1).startswith("from"):
            module = match.group(3)
            level = len(match.group(2))
            if module == "__future__":
                continue
            body = rest.strip()
            if body.startswith("("):
                body = body[1 : body.find(")") if ")" in body else len(body)]
            pairs: list[tuple[str, str | None]] = []
            for part in body.replace("\\\n", " ").split(","):
                words = part.split()
                if len(words) == 1 and (words[0] == "*" or _IDENTIFIER.match(words[0])):
                    pairs.append((words[0], None))
                elif len(words) == 3 and words[1] == "as" and _IDENTIFIER.match(words[0]) and _IDENTIFIER.match(words[2]):
                    pairs.append((words[0], words[2]))
            if pairs and (module or level):
                found.append(ImportStmt(level, module, tuple(pairs)))
        else:
            for part in rest.replace("\\\n", " ").split(","):
                words = part.split()
                if len(words) == 1 and _dotted(words[0]):
                    found.append(ImportStmt(0, words[0], ()))
                elif len(words) == 3 and words[1] == "as" and _dotted(words[0]) and _IDENTIFIER.match(words[2]):
                    found.append(ImportStmt(0, words[0], (), words[2]))
    return tuple(found)


def scanned(text: str) -> tuple[ImportStmt, ...]:
    """`scan_imports`, once per text in a process (a program per checked file reads the same)."""
    found = _IMPORTS_CACHE.get(text)
    if found is None:
        if len(_IMPORTS_CACHE) >= _IMPORTS_CACHE_LIMIT:
            _IMPORTS_CACHE.clear()
        found = _IMPORTS_CACHE[text] = scan_imports(text)
    return found


def import_words(stmts: Iterable[ImportStmt]) -> set[str]:
    """The words import statements name (a module's or a package's parts, imported names):
    a file may import a module only when its statements name the module's last name."""
    words: set[str] = set()
    for stmt in stmts:
        words.update(stmt.module.split("."))
        words.update(name for name, _ in stmt.names)
    return words


def _dotted(text: str) -> bool:
    return all(_IDENTIFIER.match(p) for p in text.split("."))


def _logical_rest(text: str, start: int) -> str:
    """The rest of the logical line from `start`: through brackets and backslash newlines, up
    to a `;` or `#`, at most a few thousand characters."""
    depth = 0
    i = start
    end = min(len(text), start + 8192)
    while i < end:
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "\\" and i + 1 < end and text[i + 1] == "\n":
            i += 2
            continue
        elif char in "\n;#" and depth == 0:
            break
        elif char == "#":
            newline = text.find("\n", i, end)
            i = end if newline < 0 else newline + 1
            continue
        i += 1
    return text[start:i]




# ---------------------------------------------------------------------- the words of a tree

# The words of each file of a walk, kept between runs in the cache's directory (`ProgramSpec.
# memo`): the callers of a checked file are looked for among the files whose import statements
# name its module, and reading and scanning every file of jax's tree for that was 0.24 s of a
# pre-commit run checking five of its files.
WORDS_FORMAT = 1
# A file modified this close to when the index was written may have changed again within the
# same timestamp (git's "racily clean" entries): it is read again.
_RACY_NS = 2_000_000_000


@dataclass
class TreeWords:
    """Which files of a walk name each import word, and the hash of each file's bytes (the
    scan's snapshot): read from the files, or from the index a previous run kept of those
    whose modification time, change time, size and inode are still what it saw."""

    index: dict[str, list[str]]
    snapshot: dict[str, str | None]
    read: int = 0  # files read (the rest came from the kept index)


def tree_words(paths: Iterable[str], read: Callable[[str], tuple[str | None, str | None]], memo: str = "",
               where: str = "") -> TreeWords:
    """The words of `paths` (`import_words` of each one's text, `read` giving its text and
    hash); with `memo`, a directory, the index of the walk `where` names is kept there."""
    import hashlib
    import json
    import os
    import time

    kept: dict[str, list[Any]] = {}
    target = ""
    if memo:
        target = os.path.join(memo, f"words-{hashlib.blake2b(where.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()}.json")
        try:
            with open(target, "rb") as handle:
                data = json.loads(handle.read())
            if isinstance(data, dict) and data.get("format") == WORDS_FORMAT and data.get("where") == where:
                written = data.get("written")
                files = data.get("files")
                if isinstance(written, int) and isinstance(files, dict):
                    kept = {p: e for p, e in files.items() if _entry_ok(e) and e[0] < written - _RACY_NS}
        except (OSError, ValueError, RecursionError):
            kept = {}
    found = TreeWords({}, {})
    entries: dict[str, list[Any]] = {}
    for path in paths:
        entry = kept.get(path) if kept else None
        stamp: list[int] | None = None
        if memo:
            try:
                info = os.stat(path)
                stamp = [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
            except (OSError, ValueError):
                stamp = None
        if entry is not None and stamp is not None and entry[:4] == stamp:
            hashed, words = entry[4], entry[5]
        else:
            text, hashed = read(path)
            words = sorted(import_words(scanned(text))) if text is not None else []
            found.read += 1
        found.snapshot[path] = hashed
        for word in words:
            found.index.setdefault(word, []).append(path)
        if stamp is not None:
            entries[path] = [*stamp, hashed, words]
    if memo and found.read:
        _write_index(target, {"format": WORDS_FORMAT, "where": where, "written": time.time_ns(), "files": entries})
    return found


def _entry_ok(entry: object) -> bool:
    return (
        isinstance(entry, list) and len(entry) == 6 and all(isinstance(v, int) for v in entry[:4])
        and (entry[4] is None or isinstance(entry[4], str))
        and isinstance(entry[5], list) and all(isinstance(w, str) for w in entry[5])
    )


def _write_index(target: str, data: dict[str, Any]) -> None:
    """Whole or not at all (a temporary file beside it, then a rename); a directory that
    cannot be written keeps no index (the next run reads the files again)."""
    import contextlib
    import json
    import os
    import tempfile

    directory = os.path.dirname(target)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".words.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(json.dumps(data).encode("utf-8", "surrogatepass"))
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


__all__ = ["ImportStmt", "TreeWords", "import_words", "scan_imports", "scanned", "tree_words"]
