"""The modules of the checked tree as this process indexed them: each content once.

Shared by every program of a process (the language server's child, a worker of `mmalint
check`): a module that several checked files import is split into blocks once, and so is a
checked file that a file checked after it imports (`share`). Keyed by real path and a digest
of the text; a module `ast` cannot read is kept as None, so that it is not tried again.
Nothing here imports or runs what it reads.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from mmalint.lines import tree_of
from mmalint.tree import digest

if TYPE_CHECKING:
    from mmalint.analysis.source import SourceFile

_INDEXED: dict[tuple[str, str], SourceFile | None] = {}
_LIMIT = 4096
# The key of each file's last shared index: an editor's buffer is checked at every edit, and
# only its latest text is kept for the importers (not one index per keystroke).
_SHARED: dict[str, tuple[str, str]] = {}


def _key(path: str, text: str) -> tuple[str, str]:
    return (path, digest(text.encode("utf-8", "surrogatepass")))


def _keep(key: tuple[str, str], source: SourceFile | None) -> None:
    if len(_INDEXED) >= _LIMIT:
        _INDEXED.clear()
        _SHARED.clear()
    _INDEXED[key] = source


def index_of(path: str, text: str, index: Callable[[], SourceFile | None]) -> SourceFile | None:
    """The index of the module at real `path` with `text`: this process's, else `index()`'s."""
    key = _key(path, text)
    if key in _INDEXED:
        return _INDEXED[key]
    found = index()
    _keep(key, found)
    return found


def indexed(path: str, text: str) -> SourceFile | None:
    """The index this process made of the module at real `path` with `text`, if it made one."""
    return _INDEXED.get(_key(path, text)) if _INDEXED else None


def share(path: str, source: SourceFile) -> None:
    """A checked file's own index (`engine.check_text`), for the later programs of this
    process that import the file: when it is the index they would make themselves, a text
    `ast` read as it is (its tree kept, `lines.tree_of`), not syntax newer than this
    Python's, which a program leaves unknown. The caller names the file as programs do."""
    if not isinstance(tree_of(source.text), ast.Module):
        return
    key = _key(path, source.text)
    if key in _INDEXED:
        return
    last = _SHARED.pop(path, None)
    if last is not None:
        _INDEXED.pop(last, None)
    _keep(key, source)
    _SHARED[path] = key



def forget(path: str, source: SourceFile) -> None:
    """Drop this process's index `source` of the module at real `path`: its text is about to
    change in place (the language server's re-run of one root, `lsp/rerun.py`)."""
    for key in [key for key, found in _INDEXED.items() if found is source and key[0] == path]:
        del _INDEXED[key]
        if _SHARED.get(path) == key:
            del _SHARED[path]
