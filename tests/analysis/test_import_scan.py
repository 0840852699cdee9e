"""The scan of a file's import statements (`imports.scan_imports`), against its definitions:
the statement pattern tried at the start of every row, and the rest of a logical line read
one character at a time."""

from __future__ import annotations

import itertools
import re

import pytest

from mmalint.analysis import imports
from mmalint.analysis.imports import _import_rows, _logical_rest, _walked_rest, scan_imports

# The definition the row search must agree with: the pattern at every row's start.
_EVERY_ROW = re.compile("^" + imports._IMPORT_START.pattern, re.MULTILINE)

_ROWS = [
    "import os", "import os, sys as system", "  import jax.numpy as jnp  # comment",
    "from . import utils", "from ..pkg.mod import (a,\n    b as c,  # why\n)",
    "from x import y; import z", "x = 'important'", "reimport = 1", "from x import y \\\n    , z",
    "\timport\tnumpy", "from __future__ import annotations", "def f():\n    from m import g",
    "s = '''\nimport inside_a_string\n'''", "from x import *", "importlib.import_module('a')",
    "from x import [y]", "import a.b.c", "from x import (y", "import a \\", "from\tx\timport\ty",
    "x = 1  # import nothing", "if 1: import q", "\x0cimport ff", "import r\r", "from s import t\r\nu = 1",
]


def _texts() -> list[str]:
    texts = list(_ROWS)
    for a, b in itertools.product(_ROWS, repeat=2):
        texts += [a + "\n" + b, a + b, "\n\n" + a + "\n" + b + "\n"]
    return texts


@pytest.mark.parametrize("chunk", range(4))
def test_the_rows_searched_are_the_rows_the_pattern_matches(chunk: int) -> None:
    texts = _texts()[chunk::4]
    for text in texts:
        expected = [(m.start(), m.end(), m.groups()) for m in _EVERY_ROW.finditer(text)]
        assert [(m.start(), m.end(), m.groups()) for m in _import_rows(text)] == expected, repr(text)


def test_the_rest_of_a_line_is_what_the_walk_reads() -> None:
    for text in _texts():
        for start in range(len(text) + 1):
            end = min(len(text), start + 8192)
            assert _logical_rest(text, start) == _walked_rest(text, start, end), (repr(text), start)


def test_statements() -> None:
    found = scan_imports("import os, sys as system\nfrom ..pkg import (a,\n  b as c)\nx = 'import no'\n")
    assert [(s.level, s.module, s.names, s.asname) for s in found] == [
        (0, "os", (), None), (0, "sys", (), "system"), (2, "pkg", (("a", None), ("b", "c")), None),
    ]


@pytest.mark.parametrize(("text", "stored"), [
    ("m.ACC = 1", {"ACC"}), ("pkg.m.ACC=1", {"ACC"}), ("m.ACC += 1", {"ACC"}), ("m.ACC //= 2", {"ACC"}),
    ("m.ACC >>= 1", {"ACC"}), ("a, m.ACC = 1, 2", {"ACC"}), ("if x: m.ACC = 1", {"ACC"}),
    ("f().ACC = 1", {"ACC"}), ("myself.ACC = 1", {"ACC"}), ("x: m.T = 1", {"T"}),  # over-approximated
    ("setattr(m, 'ACC', 1)", {"ACC"}), ('monkeypatch.setattr(m, "ACC", v)', {"ACC"}),
    ("monkeypatch.setattr('pkg.m.ACC', v)", {"ACC"}), ("mock.patch.object(\n  m, 'ACC', v)", {"ACC"}),
    ("@patch('pkg.m.ACC', v)", {"ACC"}), ("with mock.patch(r'm.ACC'):", {"ACC"}),
    ("@mock.patch.multiple(m, ACC=jnp.int32, OUT=f(x, y=1))", {"ACC", "OUT", "y"}),
    ("mock.patch.multiple('pkg.m', ACC=1)", {"ACC"}),
    # Not a store through another object's name.
    ("self.ACC = 1", set()), ("cls.ACC = 1", set()), ("m.ACC == 1", set()), ("m.ACC <= 1", set()),
    ("m.ACC >= 1", set()), ("m.ACC != 1", set()), ("f(m.ACC)", set()), ("x = m.ACC", set()),
    ("getattr(m, 'ACC')", set()), ("mock.patch.dict(m.T, {'a': 1})", set()), ("1.5 + 2", set()),
    ("x.multiple(a == 1)", set()),
])
def test_the_attribute_names_a_file_stores(text: str, stored: set[str]) -> None:
    assert imports.stored_attributes(text) == stored
    assert {w for w in imports.index_words(text) if w.startswith(imports.STORED)} == {
        imports.STORED + name for name in stored}
