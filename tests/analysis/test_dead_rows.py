"""A generated function of thousands of rows is parsed and run without its dead pure
assignments (`dead_rows.dead_rows`): what the analysis finds is the same, to the position."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmalint import config
from mmalint.analysis import source as S
from mmalint.catalog import load_catalog
from mmalint.pipeline.file import lint_text
from mmalint.pipeline.options import LintOptions

ROOT = Path(__file__).resolve().parents[2]
DEAD = "_dead_a = 1 + 2\n_dead_b = (_dead_a * 3, -_dead_a)\n_dead_c = _dead_b == 0 or True\n"


def _with_dead_rows(text: str) -> str:
    """Dead assignments after the first row of each def, top-level or a method (the
    examples indent by 2)."""
    def insert(match: re.Match[str]) -> str:
        indent = match.group(1) + "  "
        return match.group(0) + "".join(indent + row + "\n" for row in DEAD.splitlines())

    return re.sub(r"(?m)^( *)def [^\n]*:\n(?=\1  \S)", insert, text)


def _lint(path: Path, text: str, elide_from: int, monkeypatch: pytest.MonkeyPatch):
    catalog = load_catalog()
    resolver = config.Resolver(config.Overrides(target_jax="0.12"), "0.12", catalog=catalog)
    monkeypatch.setattr(S, "ELIDE_FROM_ROWS", elide_from)
    S._PARSED.clear()
    return lint_text(str(path), text, resolver.for_path(path), LintOptions())


@pytest.mark.parametrize("name", [
    "examples/warp_int8_matmul.py", "examples/seed_from_tensor_mma.py", "examples/pallas_u8_dot_test.py",
    "examples/wgmma_pallas_int8_kn_weights.py", "examples/tcgen05_raw_int8_f32_acc.py",
])
def test_leaving_dead_rows_out_finds_the_same(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROOT / name
    text = _with_dead_rows(path.read_text())
    assert "_dead_b = (_dead_a * 3, -_dead_a)" in text
    left_out: list[set[int]] = []
    dead_rows = S.dead_rows
    monkeypatch.setattr(S, "dead_rows", lambda node: left_out.append(dead_rows(node) or set()) or left_out[-1])
    whole = _lint(path, text, 10**9, monkeypatch)
    assert not left_out
    without = _lint(path, text, 0, monkeypatch)
    assert any(left_out), "no row was left out"
    assert whole == without
    assert whole.diagnostics


def test_what_is_read_or_impure_stays() -> None:
    import ast

    text = (
        "def f(a):\n"
        "  k = 64\n"            # 2: read by the return: kept
        "  j = k + 1\n"         # 3: read by nothing: dead
        "  p = a + 1\n"         # 4: reads a parameter: kept
        "  q = len(a)\n"        # 5: a call: kept
        "  r = a.shape\n"       # 6: an attribute: kept
        "  s = 1; t = 2\n"      # 7: two statements on a row: kept
        "  def g():\n"
        "    return u\n"
        "  u = 3\n"             # 10: read by a nested function: kept
        "  v = (1,\n"
        "       2)\n"           # 11-12: dead, over two rows
        "  return k\n"
    )
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert S.dead_rows(node) == {3, 11, 12}
    assert S.dead_rows(ast.parse(text.replace("  return k\n", "  return locals()\n")).body[0]) is None
    only_dead = ast.parse("def f():\n  a = 1\n  b = 2\n").body[0]
    assert S.dead_rows(only_dead) == {2}  # a def keeps a statement


def test_an_index_without_its_tree_still_leaves_dead_rows_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # A program's index keeps no `ast` tree, and a check may take it over (`engine.indexed_by`):
    # the block's parse reads the module's rows again rather than parsing the whole function.
    monkeypatch.setattr(S, "ELIDE_FROM_ROWS", 3)
    S._PARSED.clear()
    text = "import jax\n\n\ndef f(a):\n" + DEAD.replace("_dead", "  _dead") + "  return a\n"
    source = S.index_source("kept_no_tree.py", text)  # as a program indexes a module
    block = source.blocks[-1]
    assert block.kind == "def" and S.tree_of(text) is None
    statements = block.statements()
    assert block._rows is not None and len(block._rows) < block.end_line - block.start_line + 1
    assert len(statements) == 1


def test_an_index_without_its_tree_parses_its_module_once_for_all_its_large_defs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two generated functions in a module a program indexed: their dead rows come from one
    # parse of the module's rows, not one each (each is a parse of the whole file).
    monkeypatch.setattr(S, "ELIDE_FROM_ROWS", 3)
    S._PARSED.clear()
    body = DEAD.replace("_dead", "  _dead") + "  return a\n"
    text = "import jax\n\n\ndef f(a):\n" + body + "\n\nclass C:\n  def g(self, a):\n" + body.replace("  ", "    ")
    source = S.index_source("two_generated.py", text)
    parsed: list[int] = []
    real_ast_tree = S._ast_tree

    def counting(module_text: str) -> object:
        if module_text == text:
            parsed.append(len(module_text))
        return real_ast_tree(module_text)

    monkeypatch.setattr(S, "_ast_tree", counting)
    f, g = source.blocks[-2], source.blocks[-1].members[0]
    assert (f.kind, f.name, g.kind, g.name) == ("def", "f", "def", "g")
    for block in (f, g):
        assert len(block.statements()) == 1
        assert block._rows is not None and len(block._rows) < block.end_line - block.start_line + 1
    assert len(parsed) == 1
