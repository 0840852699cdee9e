"""A file's import statements, from a scan of its lines (no parse): what the checked tree's
import graph is drawn from (`program.Program.edges`), and what the callers of a module are
looked for by (`import_words`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from mmalint.analysis.brackets import bracket_end

# The word of the tree's index (`index_words`) for an attribute name a file stores through
# some name (`m.ACC = v`): not a word an import statement can name.
STORED = "."

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
# Matched at the start of a row that holds the word `import` (found by `str.find`: a regex
# tried at every row's start read jax's tree at about 90 MB/s, a tenth of the time a cold run's
# word index of the tree took in each process).
_IMPORT_START = re.compile(r"[ \t]*(from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import\b|import[ \t]+)")


def _import_rows(text: str) -> Iterator[re.Match[str]]:
    """`_IMPORT_START` at the start of each row where it matches, in order."""
    at = text.find("import")
    while at >= 0:
        row = text.rfind("\n", 0, at) + 1
        match = _IMPORT_START.match(text, row)
        if match is not None:
            yield match
        next_row = text.find("\n", max(at, match.end() if match is not None else at))
        if next_row < 0:
            return
        at = text.find("import", next_row + 1)


def scan_imports(text: str) -> tuple[ImportStmt, ...]:
    """The import statements of a text, from its lines (an over-approximation: an import in a
    docstring counts too); a statement this scan cannot read is skipped."""
    found: list[ImportStmt] = []
    for match in _import_rows(text):
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


def stored_attributes(text: str) -> set[str]:
    """The attribute names `text` may bind through a name other than `self` or `cls`, as a
    file may bind a global of a module it imports again: `m.ACC = v` (an augmented store, a
    tuple target), `setattr(m, "ACC", v)` (pytest's `monkeypatch.setattr` too),
    `mock.patch.object(m, "ACC", v)`, `mock.patch("pkg.m.ACC", v)`, `mock.patch.multiple(m,
    ACC=v)`. An over-approximation
    (a store in a string, an annotated local `x: np.dtype = ...` count too)."""
    found: set[str] = set()
    for match in _ATTRIBUTE_STORE.finditer(text):
        start = match.start()
        if match.group(2) in ("<", ">"):
            continue  # `m.X <= v`: a comparison
        if not ((text[start - 4 : start] == "self" and not _word_char(text, start - 5))
                or (text[start - 3 : start] == "cls" and not _word_char(text, start - 4))):
            found.add(match.group(1))
    for word, forms in _BY_STRING_CALLS:
        at = text.find(word)
        while at >= 0:
            for form in forms:
                call = form.match(text, at + len(word))
                if call is not None:
                    found.add(call.group(2))
            at = text.find(word, at + len(word))
    at = text.find(".multiple")
    while at >= 0:
        # `mock.patch.multiple(m, ACC=v, OUT=w)`: the keywords name what it binds.
        call = _MULTIPLE.match(text, at)
        if call is not None:
            found.update(_KEYWORD.findall(_call_arguments(text, call.end())))
        at = text.find(".multiple", at + 1)
    return found


def _call_arguments(text: str, start: int) -> str:
    """The text of a call's arguments from just after its `(` up to the matching `)` (at
    most a few thousand characters; strings are not told apart: an over-approximation)."""
    end = bracket_end(text, start - 1, within=4097)
    return text[start : end - 1] if end is not None else text[start : start + 4096]


# `.name` then an assignment (`=`, `+=`, `//=`, ...), not `==`: matched from each dot (a
# regex anchored at a row's start missed `a, m.X = ...` and `for t in ts: t.x = v`).
# Possessive: once `\w++` has read a name it is not given back a character at a time to look
# for a `=` (a third of the time over jax's tree, 400k dots).
_ATTRIBUTE_STORE = re.compile(r"\.(\w++)[ \t]*+([-+*/%@&|^<>]{0,2}+)=(?!=)")
# After `setattr` (pytest's `monkeypatch.setattr` too): `(m, "ACC", ...` or `("pkg.m.ACC", ...`;
# after `patch`: `("pkg.m.ACC", ...` or `.object(m, "ACC", ...`. Found by `str.find` (a regex
# with an alternation first is tried at every character).
_ARGS_BY_NAME = r"[ \t]*\([ \t\n]*[\w.]+[ \t\n]*,[ \t\n]*[rbuRBU]?([\"'])(\w+)\1"
_BY_NAME = re.compile(_ARGS_BY_NAME)
_BY_PATH = re.compile(r"[ \t]*\([ \t\n]*[rbuRBU]?([\"'])[\w.]+\.(\w+)\1")
_MULTIPLE = re.compile(r"\.multiple[ \t]*\(")
_KEYWORD = re.compile(r"(?:^|[(,])[ \t\n]*(\w+)[ \t]*=(?!=)")
_BY_STRING_CALLS = (("setattr", (_BY_NAME, _BY_PATH)), ("patch", (_BY_PATH, re.compile(r"\.object" + _ARGS_BY_NAME))))


def _word_char(text: str, at: int) -> bool:
    return at >= 0 and (text[at].isalnum() or text[at] == "_")


_INDEX_CACHE: dict[str, frozenset[str]] = {}  # by text


def index_words(text: str) -> frozenset[str]:
    """The words the tree's index holds for a file: its import statements' (`import_words`),
    and each attribute name it stores (`stored_attributes`) behind `STORED`; once per text in
    a process."""
    found = _INDEX_CACHE.get(text)
    if found is None:
        if len(_INDEX_CACHE) >= _IMPORTS_CACHE_LIMIT:
            _INDEX_CACHE.clear()
        found = _INDEX_CACHE[text] = frozenset(
            import_words(scanned(text)) | {STORED + name for name in stored_attributes(text)})
    return found


def _dotted(text: str) -> bool:
    return all(_IDENTIFIER.match(p) for p in text.split("."))


def _logical_rest(text: str, start: int) -> str:
    """The rest of the logical line from `start`: through brackets and backslash newlines, up
    to a `;` or `#`, at most a few thousand characters."""
    end = min(len(text), start + 8192)
    # Most import statements are one row with no bracket: read up to its first `;`, `#` or
    # the newline without visiting each character (the walk below took most of the tree's
    # word index: 930 files of jax, in each process of a run).
    newline = text.find("\n", start, end)
    row_end = end if newline < 0 else newline
    special = _ROW_SPECIAL.search(text, start, row_end)
    if special is not None:
        if special.group() in ";#":
            return text[start : special.start()]
    elif not (newline >= 0 and text[row_end - 1 : row_end] == "\\"):
        return text[start:row_end]
    return _walked_rest(text, start, end)


_ROW_SPECIAL = re.compile(r"[(\[{;#]")


def _walked_rest(text: str, start: int, end: int) -> str:
    """`_logical_rest` character by character: a statement in brackets, or continued."""
    depth = 0
    i = start
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


__all__ = ["STORED", "ImportStmt", "import_words", "index_words", "scan_imports", "scanned", "stored_attributes"]
