"""Faster ways to the same answers, each checked against the slow way:

- PEP 695 syntax (`def f[T]()`, `class C[T]`, `type X = ...`) on a Python whose `ast` refuses
  it: the index reads it from `ast` with the type parameters blanked out (0.53 s for the 76 such
  files of jax and tokamax, against 5.9 s through libcst), and gets the blocks libcst gets;
- PEP 701 f-strings (`f"{", ".join(x)}"`) likewise, made plain strings of their length on
  the rows `ast` refuses (jax's tcgen05.py: 0.03 s against 0.45 s);
- the prefilter's trigger words looked for only around each "mma" / "MMA" (1,903 files of jax,
  tokamax and this repository: 0.05 s against 1.4 s, the same answers).
"""

from __future__ import annotations

import ast

import pytest

from mmalint.analysis import newer_syntax as N
from mmalint.analysis import source as S

TEXT = '''\
import typing

type Alias[T] = list[T]
type Plain = int | str
type = 3
x = [0]
x[0] = 1


def first[T](items: typing.Sequence[T]) -> T:
  return items[0]


class Box[T: (int, str), *Ts, **P](typing.Generic):
  value: T

  def get[U](self, other: U) -> T | U:
    return self.value


def after():
  return first([1])
'''


def _shape(source: S.SourceFile) -> list[tuple[object, ...]]:
    return [
        (b.start_line, b.end_line, b.indent, b.kind, b.name, b.bound_names,
         tuple((m.start_line, m.end_line, m.indent, m.kind, m.name, m.bound_names) for m in b.members))
        for b in source.blocks
    ]


def test_type_parameters_blanked_index_as_libcst_does() -> None:
    tree = N.without_newer_syntax(TEXT)
    assert tree is not None
    fast = S._index_tree("t.py", TEXT, tree)
    slow = S._index_with_libcst("t.py", TEXT)
    assert slow is not None
    assert _shape(fast) == _shape(slow)
    assert {b.name for b in fast.blocks if b.kind != "stmt"} == {"first", "Box", "after"}
    # The text itself is untouched: blocks read the original rows.
    assert "def first[T]" in next(b for b in fast.blocks if b.name == "first").text


def test_the_index_of_new_syntax_goes_through_ast_where_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        ast.parse(TEXT)
    except SyntaxError:
        pass
    else:
        pytest.skip("this Python reads PEP 695 itself")
    monkeypatch.setattr(S, "_index_with_libcst", lambda *a: pytest.fail("libcst indexed it"))
    assert [b.name for b in S.index_source("t.py", TEXT).blocks if b.kind == "def"] == ["first", "after"]


def test_text_without_type_parameters_is_not_rewritten() -> None:
    assert N.without_newer_syntax("x = 1\nf'{x!r:>{10}}'\n") is None
    # Parameters over several rows are left to libcst: blanked, their rows would break the def.
    assert N.without_newer_syntax("def f[\n  T\n](x: T) -> T:\n  return x\n") is None


# PEP 701 (Python 3.12): f-strings that hold their own quotes, nested f-strings, format specs
# with fields; with PEP 695 in the same module, and a plain string that only looks like one.
FSTRINGS = '''\
import typing


def ptx(reduce, has_abs):
  red_mod = f"{".abs" if has_abs else ""}.NaN"
  return f"{f"{reduce}"!r:>{10}}" + f'{'a'}{{literal}}' + rf"\\d{"x"}" + "f{" + f"{"}"}"


class Box[T]:
  label = f"{", ".join(["a", "b"])}"

  def get[U](self, other: U) -> T | U:
    if"x": return f"{other["k"]}"  # if"x" is a keyword and a string
    return other


def after():
  return ptx("max", True)
'''


def _refused_by_this_python(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    return None


def test_new_fstrings_made_plain_index_as_libcst_does() -> None:
    error = _refused_by_this_python(FSTRINGS)
    if error is None:
        pytest.skip("this Python reads PEP 701 itself")
    tree = N.without_newer_syntax(FSTRINGS)
    assert tree is not None
    fast = S._index_tree("t.py", FSTRINGS, tree)
    slow = S._index_with_libcst("t.py", FSTRINGS)
    assert slow is not None
    assert _shape(fast) == _shape(slow)
    assert [b.name for b in fast.blocks if b.kind != "stmt"] == ["ptx", "Box", "after"]
    assert 'f"{".abs"' in next(b for b in fast.blocks if b.name == "ptx").text  # the rows as written


def _blank(token: str) -> str:
    return '"' + " " * (len(token) - 2) + '"'


@pytest.mark.parametrize("before, fstring, after", [
    ("x = ", 'f"{", ".join(y)}"', "\n"),
    ('x = "f{" + ', 'rf"{"a"}"', '  # f"{"\n'),
    ("x = ", 'f"{f"{y}"}"', "\n"),
    ("x = ", "f'{a + f'{b}'}'", " + f'{c}'\n"),  # the last one reads on any Python: as written
    ("x = ", 'f"{"\\n".join(a)}"', "\n"),
])
def test_a_row_of_new_fstrings_reads_as_plain_strings_of_their_length(before: str, fstring: str, after: str) -> None:
    assert N.plain_fstrings(before + fstring + after) == before + _blank(fstring) + after


@pytest.mark.parametrize("line", ["x = f'{a!r:>{w}}' + 'b'\n", 'x = f"{{}}" + f"{d[\'k\']}"\n', 'if"x": y = "f{"\n'])
def test_a_row_any_python_reads_is_left_as_written(line: str) -> None:
    assert N.plain_fstrings(line) == line


def test_fstrings_nested_deeper_than_real_code_are_left_to_libcst() -> None:
    def nested(levels: int) -> str:
        return "1" if levels == 0 else 'f"{' + nested(levels - 1) + '}"'

    shallow = "x = " + nested(N.MAX_FSTRING_NESTING) + "\n"
    assert N.plain_fstrings(shallow) == "x = " + _blank(nested(N.MAX_FSTRING_NESTING)) + "\n"
    assert N.plain_fstrings("x = " + nested(N.MAX_FSTRING_NESTING + 2) + "\n") is None


@pytest.mark.parametrize("line", ['x = f"""{a}\n', 'x = f"{a\n', "x = f'{a}\\\n"])
def test_a_string_that_goes_on_over_rows_is_left_to_libcst(line: str) -> None:
    assert N.plain_fstrings(line) is None


# ---------------------------------------------------------------------- the prefilter's shortcut


@pytest.mark.parametrize("text", [
    "", "gamma = 1", "x.wgmma(a)", "wgmma", "mgpu.mma(acc, a, b)", "tcgen05.mma(", "tcgen05_mma",
    "dialect.mma(", "_mma", "mma_", "xmma", "Layout.MMA_ACC", "MMALayouts(", "MMA_", "# mma\n",
    "summary " * 50 + "plgpu.mma", "comma" * 3 + "\nmma", "tcgen05.mma" * 2, "a" * 20 + "MMA_RHS",
])
def test_the_prefilter_shortcut_answers_as_the_pattern(text: str) -> None:
    from mmalint.analysis import prefilter

    assert prefilter._GATES is not None, "every trigger word spells mma or MMA"
    assert prefilter.triggered(text) == (prefilter.TRIGGER_TEXT.search(text) is not None)
    data = text.encode()
    assert prefilter.may_contain_mma(data) == (prefilter.TRIGGER.search(data) is not None)


def test_a_word_that_does_not_always_spell_the_gate_is_seen() -> None:
    import re

    from mmalint.analysis import prefilter

    spells = lambda pattern: prefilter._always_spells(list(prefilter._parser.parse(pattern)), "mma")  # noqa: E731
    assert spells(r"(?<!x)wgmma\b") and spells(r"tcgen05(?:\.mma|_mma)") and spells(r"m(?:m)a")
    assert not spells(r"foo|mma") and not spells(r"(?:mma)?x")
    # A group that cuts the literals: not seen to spell it, so the shortcut would be off (safe).
    assert not spells(r"(m)ma") and re.compile(r"(m)ma").search("mma")


def test_the_node_classes_tested_by_class_have_no_subclasses() -> None:
    # The interpreter tests these libcst classes with `type(node) is C` and set membership
    # instead of `isinstance` (libcst's ABCs made that the hottest line of a run). That is the
    # same test only while libcst defines no subclass of them.
    import libcst as cst

    from mmalint.analysis.interpreter import expressions

    tested = {*expressions._LITERALS, cst.Tuple, cst.List, cst.ListComp, cst.GeneratorExp,
              cst.SetComp, cst.StarredElement, cst.Index, cst.Comma, cst.Param, cst.Attribute,
              cst.Import, cst.ImportFrom, cst.Name, cst.If, cst.Else}
    assert len(expressions._LITERALS) == 5
    assert {kind.__name__ for kind in tested if kind.__subclasses__()} == set()


def test_the_scope_walk_knows_a_node_by_its_class() -> None:
    import libcst as cst

    from mmalint.analysis import scopes

    assert scopes._is_node(cst.Name) and scopes._is_node(cst.Comma)
    assert not scopes._is_node(tuple) and not scopes._is_node(str)
    assert not scopes._is_node(type(cst.MaybeSentinel.DEFAULT))
    code = "def f(a, *b):\n  (c, [d]) = a\n  e: int = 1\n  for g in b:\n    def h(): k = 1\n"
    function = cst.parse_module(code).body[0]
    assert isinstance(function, cst.FunctionDef)
    # Through tuples, lists and nested blocks; not into the nested function.
    assert scopes.local_names_of(function.body).names == {"c", "d", "e", "g", "h"}
