"""Jupyter notebooks (`.ipynb`): their code cells read as one Python module, fixes put back.

As ruff reads them: the code cells of an nbformat-4 notebook, in order, are one module, since
they share one namespace (a dtype chosen in one cell reaches the call in a later one). Left out
are markdown and raw cells, and cells that are not Python: one run by a cell magic (`%%bash`;
`%%time` and the others whose body is Python stay), one that starts with an automagic
(`pip install ...`), one VS Code marks as another language, and every cell of a notebook whose
kernel is not Python.

IPython escapes, which IPython rewrites before Python sees them (`%matplotlib inline`,
`!nvidia-smi`, `files = !ls`, `np.zeros?`), become a placeholder name, so every other row and
column stays where it is, and come back as written when a fix writes the cell.

Each cell is followed in the module by a boundary comment (ruff puts a newline there): a cell's
rows are those up to its boundary, and the fixed module is cut back into cells at the
boundaries, with no map of what the fixes moved. A fixed cell's new source takes the place of
the old one in the JSON text, in the same form (a list of lines or one string), so the rest of
the file (indentation, key order, outputs, the final newline) stays byte for byte.
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from mmalint.diagnostics import Diagnostic, FileReport, Location, Range
from mmalint.lines import split_lines
from mmalint.pipeline.text import InputError
from mmalint.source_io import SourceText

SUFFIX = ".ipynb"

# IPython's automagics (ruff's list): a cell whose first word is one, not followed by an
# assignment (`cd = 1`), is a command such as `pip install jax`, not Python.
AUTOMAGICS = frozenset({
    "alias", "alias_magic", "autoawait", "autocall", "automagic", "bookmark", "cd", "code_wrap",
    "colors", "conda", "config", "debug", "dhist", "dirs", "doctest_mode", "edit", "env", "gui",
    "history", "killbgscripts", "load", "load_ext", "loadpy", "logoff", "logon", "logstart",
    "logstate", "logstop", "lsmagic", "macro", "magic", "mamba", "matplotlib", "micromamba",
    "notebook", "page", "pastebin", "pdb", "pdef", "pdoc", "pfile", "pinfo", "pinfo2", "pip",
    "popd", "pprint", "precision", "prun", "psearch", "psource", "pushd", "pwd", "pycat", "pylab",
    "quickref", "recall", "rehashx", "reload_ext", "rerun", "reset", "reset_selective", "run",
    "save", "sc", "set_env", "sx", "system", "tb", "time", "timeit", "unalias", "unload_ext",
    "who", "who_ls", "whos", "xdel", "xmode",
})
ASSIGNMENT_OPERATORS = frozenset({"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^="})
# Cell magics whose body is Python run in the notebook's namespace (ruff's list): the cell is
# checked, its `%%time` line an escape like any other.
PYTHON_CELL_MAGICS = frozenset({
    "capture", "debug", "ipytest", "prun", "pypy", "python", "python3", "time", "timeit",
})

# What IPython reads as an escape at the start of a logical line: magics (`%`), shell commands
# (`!`), help (`?`) and the autocall forms (`/f x`, `,f a b`, `;f a b`). None can start Python.
_ESCAPES = ("%", "!", "?", "/", ",", ";")
# `files = !ls`, `t = %timeit -o f()`: an escape as the value of an assignment.
_ASSIGNED_ESCAPE = re.compile(r"[ \t]*[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]*=[ \t]*(?=[%!])")
# `np.zeros?`, `obj.attr??`, `%timeit?`: help asked after a name.
_HELP_AFTER = re.compile(r"[ \t]*[\w.*%\[\]]+\?\??[ \t]*\Z")
_DECODER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


class NotebookError(InputError):
    """A `.ipynb` file that is not an nbformat-4 notebook, or fixes that cannot go back into
    its cells: `str()` is one line for the user."""


def is_notebook(name: str) -> bool:
    """Whether the file `name` is read as a Jupyter notebook (by its suffix, as ruff does)."""
    return name.endswith(SUFFIX)


@dataclass(frozen=True)
class Cell:
    """A code cell that is checked."""

    number: int  # 1-based among all the notebook's cells, as ruff numbers them
    text: str  # its source as written


@dataclass(frozen=True)
class Notebook:
    json_text: str  # the file as read, decoded
    cells: tuple[Cell, ...]  # the code cells that are Python, in order
    python: str  # what is checked: those cells joined, escapes replaced by placeholders
    tag: str  # names the placeholders and boundaries; no cell holds what it names
    escapes: tuple[str, ...]  # what placeholder number i stands for, as written

    @property
    def shown(self) -> str:
        """`python` with each escape as written, row for row: what a code frame shows."""
        return self._restored(self.python)

    def place(self, report: FileReport, python: str | None = None) -> FileReport:
        """`report`, of this notebook's module (`python`, fixed or as read), with each of its
        positions in this file also given as a cell and a row within it."""
        starts = self._cell_starts(self.python if python is None else python)
        if starts is None or not report.diagnostics:
            return report
        cells = _Cells(tuple(starts), tuple(c.number for c in self.cells), report.filename)
        return replace(report, diagnostics=tuple(cells.diagnostic(d) for d in report.diagnostics))

    def with_python(self, python: str) -> str:
        """The notebook's JSON text with `python` (its module, after fixes) put back into its
        cells; the JSON around a cell's `source` is kept as it is."""
        changed: dict[int, str] = {}
        for cell, chunk in zip(self.cells, self._cut(python), strict=True):
            text = self._restored(chunk)
            if cell.text and not cell.text.endswith(("\n", "\r")) and text.endswith("\n"):
                text = text[:-1]  # the newline the module added after the cell
            if text != cell.text:
                changed[cell.number] = text
        if not changed:
            return self.json_text
        spans = _source_spans(self.json_text)
        ascii_only = self.json_text.isascii()
        out: list[str] = []
        done = 0
        for number in sorted(changed):
            start, end = spans[number - 1]
            out += [self.json_text[done:start], _source_json(self.json_text[start:end], changed[number], ascii_only)]
            done = end
        out.append(self.json_text[done:])
        return "".join(out)

    def diff(self, fixed_json: str, name: str) -> list[str]:
        """A unified diff of each code cell that `fixed_json` (this notebook, fixed) changes,
        named `name:cell N` (ruff's form)."""
        fixed = {c.number: c.text for c in read_notebook(fixed_json).cells}
        out: list[str] = []
        for cell in self.cells:
            after = fixed.get(cell.number, cell.text)
            if after == cell.text:
                continue
            label = f"{name}:cell {cell.number}"
            out += difflib.unified_diff(_diff_lines(cell.text), _diff_lines(after), fromfile=label, tofile=label)
        return out

    def _boundary(self, k: int) -> str:
        return f"# {self.tag} cell boundary {k}\n"

    def _cell_starts(self, python: str) -> list[int] | None:
        """The row of `python` each cell starts on, or None if its boundaries are not all there."""
        starts = [1]
        for row, line in enumerate(split_lines(python), start=1):
            if len(starts) <= len(self.cells) and line == self._boundary(len(starts) - 1):
                starts.append(row + 1)
        return starts[:-1] if len(starts) == len(self.cells) + 1 else None

    def _cut(self, python: str) -> list[str]:
        chunks: list[str] = []
        current: list[str] = []
        for line in split_lines(python):
            if len(chunks) < len(self.cells) and line == self._boundary(len(chunks)):
                chunks.append("".join(current))
                current = []
            else:
                current.append(line)
        if len(chunks) != len(self.cells):
            raise NotebookError("the fixes would move code across a cell boundary; not fixed")
        if chunks and current:  # text a fix appended after the last cell belongs to it
            chunks[-1] += "".join(current)
        return chunks

    def _restored(self, text: str) -> str:
        placeholder = re.compile(rf"#?__{re.escape(self.tag)}_ipython_(\d+)__")

        def original(match: re.Match[str]) -> str:
            number = int(match.group(1))
            return self.escapes[number] if number < len(self.escapes) else match.group(0)

        return placeholder.sub(original, text)


@dataclass(frozen=True)
class _Cells:
    starts: tuple[int, ...]  # the row of the module each cell starts on
    numbers: tuple[int, ...]
    filename: str

    def location(self, at: Location) -> Location:
        i = bisect.bisect_right(self.starts, at.row) - 1
        if i < 0:
            return at
        return replace(at, cell=self.numbers[i], cell_row=at.row - self.starts[i] + 1)

    def range(self, where: Range) -> Range:
        if where.filename != self.filename:
            return where
        return replace(where, start=self.location(where.start), end=self.location(where.end))

    def diagnostic(self, d: Diagnostic) -> Diagnostic:
        fix = d.fix
        if fix is not None:
            fix = replace(fix, edits=tuple(replace(e, range=self.range(e.range)) for e in fix.edits))
        related = tuple(replace(r, range=self.range(r.range)) for r in d.related)
        return replace(d, range=self.range(d.range), related=related, fix=fix)


# ---------------------------------------------------------------------- reading


def decode_notebook(data: bytes) -> SourceText:
    """A notebook file's JSON text: UTF-8, as JSON must be, with or without a BOM."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"not a Jupyter notebook: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    return SourceText(text, "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")


def read_notebook(json_text: str) -> Notebook:
    """The notebook in `json_text`, or NotebookError saying what is wrong with it."""
    try:
        raw = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not a Jupyter notebook: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise NotebookError("not a Jupyter notebook: its JSON is nested too deeply to read") from None
    if not isinstance(raw, dict):
        raise NotebookError(f"not a Jupyter notebook: the JSON is {_kind(raw)}, not an object with `cells`")
    version = raw.get("nbformat")
    if "nbformat" not in raw:
        raise NotebookError("not a Jupyter notebook: it has no `nbformat`")
    if not (isinstance(version, int) and not isinstance(version, bool) and version == 4):
        raise NotebookError(
            f"nbformat {json.dumps(version)}: mmalint reads nbformat 4 notebooks only "
            "(`jupyter nbconvert --to notebook --nbformat 4` converts one)"
        )
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f"malformed notebook: `cells` is {_kind(cells)}, not a list")
    python_kernel = _python_kernel(raw.get("metadata"))
    checked: list[Cell] = []
    for number, cell in enumerate(cells, start=1):
        text = _cell_source(number, cell)
        if python_kernel and _is_python_cell(cell, text):
            checked.append(Cell(number, text))
    tag = "mmalint"
    while any(f"__{tag}_ipython_" in c.text or f"# {tag} cell boundary" in c.text for c in checked):
        tag += "_"
    escapes: list[str] = []
    parts: list[str] = []
    for k, cell in enumerate(checked):
        text = _without_escapes(cell.text, tag, escapes)
        if text and not text.endswith(("\n", "\r")):
            text += "\n"
        parts.append(text + f"# {tag} cell boundary {k}\n")
    return Notebook(json_text, tuple(checked), "".join(parts), tag, tuple(escapes))


def editable(name: str, text: str) -> tuple[str, Callable[[str], str]]:
    """A file's decoded text as mmalint checks it, and what turns that text, edited, back into
    the file's text: the text itself, or a notebook's code cells and its JSON with them put
    back (unchanged where an edit would move code across a cell boundary)."""
    if not is_notebook(name):
        return text, lambda edited: edited
    notebook = read_notebook(text)

    def back(edited: str) -> str:
        try:
            return notebook.with_python(edited)
        except NotebookError:
            return text

    return notebook.python, back


def rows_text(name: str, text: str) -> str:
    """The text whose rows a file's findings count, from the file's decoded text: the text
    itself, or a notebook's code cells joined (escapes as written)."""
    return read_notebook(text).shown if is_notebook(name) else text


def _kind(value: object) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "a number"


def _cell_source(number: int, cell: object) -> str:
    if not isinstance(cell, dict):
        raise NotebookError(f"malformed notebook: cell {number} is {_kind(cell)}, not an object")
    if not isinstance(cell.get("cell_type"), str):
        raise NotebookError(f"malformed notebook: cell {number} has no `cell_type` string")
    if "source" not in cell:
        raise NotebookError(f"malformed notebook: cell {number} has no `source`")
    source = cell["source"]
    if isinstance(source, str):
        return source
    if not isinstance(source, list):
        raise NotebookError(
            f"malformed notebook: the `source` of cell {number} is {_kind(source)}, not a string or a list of strings"
        )
    others = [line for line in source if not isinstance(line, str)]
    if others:
        raise NotebookError(
            f"malformed notebook: the `source` of cell {number} is a list holding {_kind(others[0])}, not only strings"
        )
    return "".join(source)


def _python_kernel(metadata: Any) -> bool:
    """Whether the notebook is Python: its `language_info`, else its kernel's language, says so
    (ruff's test); one that says nothing is taken to be Python."""
    if not isinstance(metadata, dict):
        return True
    info = metadata.get("language_info")
    if isinstance(info, dict) and "name" in info:
        return bool(info["name"] == "python")
    spec = metadata.get("kernelspec")
    if isinstance(spec, dict):
        if "language" in spec:
            return bool(spec["language"] == "python")
        # ruff requires the language; a kernel named python3 without one is Python all the same.
        return str(spec.get("name", "python")).startswith("python")
    return True


def _is_python_cell(cell: dict[str, Any], text: str) -> bool:
    if cell.get("cell_type") != "code":
        return False
    metadata = cell.get("metadata")
    vscode = metadata.get("vscode") if isinstance(metadata, dict) else None
    if isinstance(vscode, dict) and vscode.get("languageId", "python") != "python":
        return False
    return not _magic_cell(split_lines(text))


def _magic_cell(lines: list[str]) -> bool:
    """A cell IPython does not run as Python: a cell magic, or an automagic first (ruff's test)."""
    if lines:
        words = lines[0].split()
        if words and words[0] in AUTOMAGICS and (len(words) < 2 or words[1] not in ASSIGNMENT_OPERATORS):
            return True
    for line in lines:
        words = line.split()
        if words and len(words[0]) >= 2 and words[0].startswith("%%") and words[0][2:] not in PYTHON_CELL_MAGICS:
            return True
    return False


# ---------------------------------------------------------------------- IPython escapes


def _without_escapes(text: str, tag: str, escapes: list[str]) -> str:
    """`text` with each escape replaced by a placeholder name (and each line that continues one
    by a placeholder comment); `escapes` gets what each stands for."""
    out: list[str] = []
    depth, quote, continued, in_escape = 0, None, False, False
    for line in split_lines(text):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        column: int | None = None
        if in_escape:
            out.append(f"#__{tag}_ipython_{len(escapes)}__{ending}")
            escapes.append(body)
        elif depth == 0 and quote is None and not continued and (column := _escape_column(body)) is not None:
            out.append(f"{body[:column]}__{tag}_ipython_{len(escapes)}__{ending}")
            escapes.append(body[column:])
        else:
            out.append(line)
            depth, quote, continued = _scan(body, depth, quote)
            continue
        in_escape = body.endswith("\\")
    return "".join(out)


def _escape_column(body: str) -> int | None:
    """Where an escape starts on a line that starts a logical line, or None."""
    stripped = body.lstrip(" \t")
    if stripped.startswith(_ESCAPES):
        return len(body) - len(stripped)
    if (assigned := _ASSIGNED_ESCAPE.match(body)) is not None:
        return assigned.end()
    if _HELP_AFTER.match(body):
        return len(body) - len(stripped)
    return None


def _scan(body: str, depth: int, quote: str | None) -> tuple[int, str | None, bool]:
    """After one line of Python: how deep in brackets, which string is open, and whether a
    backslash continues the line. Enough to tell where logical lines start."""
    i, n = 0, len(body)
    while i < n:
        char = body[i]
        if quote is not None:
            if char == "\\":
                i += 2
            elif body.startswith(quote, i):
                i += len(quote)
                quote = None
            else:
                i += 1
            continue
        if char == "#":
            return depth, None, False
        if char in "\"'":
            quote = body[i : i + 3] if body[i : i + 3] in ('"""', "'''") else char
            i += len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    backslash = body.endswith("\\") and (len(body) - len(body.rstrip("\\"))) % 2 == 1
    if quote in ('"', "'") and not backslash:
        quote = None  # a one-line string left open: a syntax error, the next line starts afresh
    return depth, quote, backslash and quote is None


# ---------------------------------------------------------------------- writing


def _skip_space(text: str, i: int) -> int:
    match = _JSON_SPACE.match(text, i)
    return match.end() if match else i


def _members(text: str, i: int) -> Iterator[tuple[str, int, int]]:
    """Each member of the JSON object at `text[i]` (valid JSON): its key, and where its value
    starts and ends."""
    i = _skip_space(text, i + 1)
    if text.startswith("}", i):
        return
    while True:
        key, i = _DECODER.raw_decode(text, i)
        start = _skip_space(text, _skip_space(text, i) + 1)
        _, end = _DECODER.raw_decode(text, start)
        yield key, start, end
        i = _skip_space(text, end)
        if text.startswith("}", i):
            return
        i = _skip_space(text, i + 1)


def _elements(text: str, i: int) -> Iterator[tuple[int, int]]:
    """Where each element of the JSON array at `text[i]` (valid JSON) starts and ends."""
    i = _skip_space(text, i + 1)
    if text.startswith("]", i):
        return
    while True:
        _, end = _DECODER.raw_decode(text, i)
        yield i, end
        i = _skip_space(text, end)
        if text.startswith("]", i):
            return
        i = _skip_space(text, i + 1)


def _source_spans(text: str) -> list[tuple[int, int]]:
    """Where each cell's `source` value lies in the notebook's JSON text, by cell."""
    top = _skip_space(text, 0)
    cells = None
    for key, start, _ in _members(text, top):
        if key == "cells":
            cells = start  # the last of duplicate keys wins, as for json.loads
    assert cells is not None
    spans = []
    for cell, _ in _elements(text, cells):
        found = [(start, end) for key, start, end in _members(text, cell) if key == "source"]
        spans.append(found[-1])
    return spans


def _source_json(old: str, text: str, ascii_only: bool) -> str:
    """`text` as a cell's `source` in the form of `old`, the JSON it replaces: one string, or a
    list of lines laid out as `old` lays out its own."""
    if old.startswith('"'):
        return json.dumps(text, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in split_lines(text)]
    spans = list(_elements(old, 0))
    if not spans:
        return "[" + ", ".join(items) + "]"
    opening, closing = old[1 : spans[0][0]], old[spans[-1][1] : -1]
    separator = old[spans[0][1] : spans[1][0]] if len(spans) > 1 else "," + opening if "\n" in opening else ", "
    return "[" + opening + separator.join(items) + closing + "]"


def _diff_lines(text: str) -> list[str]:
    # A cell's last line has no newline, as a rule: no "\ No newline at end of file" for it.
    return [line if line.endswith(("\n", "\r")) else line + "\n" for line in split_lines(text)]
