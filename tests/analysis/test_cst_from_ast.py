"""The trees `cst_from_ast` builds are libcst's, in every field the analysis reads, the text
`source_of` gives an expression is libcst's `code_for_node` of it (`flat_source_of`'s, its
whitespace runs made single spaces), and the position `position_of` gives is libcst's: on
every file of the repository (its kernels, its tests, mmalint itself) and on constructs picked
to be awkward."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from mmalint.analysis.cst_from_ast import (
    Unsupported,
    differences,
    flat_source_of,
    module_from_ast,
    pair_nodes,
    position_of,
    source_of,
)
from mmalint.analysis.source import index_source
from mmalint.lines import split_lines

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p for top in ("examples", "tests", "mmalint", "benchmarks") for p in (ROOT / top).rglob("*.py")
)

AWKWARD = [
    "x = f'{a!r:>{w}} {b=} {{c}} {d:%Y-%m}' 'tail' r'q'\ny = b'a' rb'b'\nz = f'{d = } {e= !r} {f(g=1)}'\n",
    "x = ('a'\n     # a comment\n     f'{b}'  'c')\n",
    "x = a[(k - 1) // 2, ...]\ny = a[(1, 2)]\nz = a[1, 2]\nw = a[()]\nv = a[*b]\nu = a[1:2, ::3]\n",
    "if a:\n    pass\nelif b: pass\nelse:\n    if c:\n        pass\n",
    "def f(a, /, b=1, *c, d, e=2, **g) -> int: return 1\n",
    "def f(*, a): ...\nlambda a, *b, c=1, **d: (a, b)\n",
    "f(a, *b, c=1, *d, **e)\nf(x for x in y if x if not x)\n",
    "del a, b\ndel (c, d)\nglobal g; nonlocal h\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nelse:\n    pass\nfinally:\n    pass\n",
    "with a as (b, c), d:\n    x: int = 1\n    y += 2\n",
    "from . import (a as b,\n    c)\nfrom ..m.n import *\nimport a.b.c as d, e\n",
    "x = not a and b or c if d else e\ny = -a ** ~b\nz = a < b <= c is not d not in e\n",
    "x = {**a, 'b': 1, **{c: d for c, d in e}}\ny = {a, *b}\nz = [*a, b]\n",
    "x = 0x1F + 1_000 + 1e-3 + 2j + ... + True + None\n",
    "class A(B, metaclass=M, **kw): x = 1; y = 2\n",
    "x = (yield)\ny = yield from z\nw = (v := 1)\n",
    "x = 'é' + f'{ü}' + a.b  # non-ASCII before a column\n",
    "match x:\n    case 1 | -1 | 2 + 3j | 'a' 'b' | None | True | m.C:\n        pass\n",
    "match x, y:\n    case [a, *rest] if a > 0:\n        pass\n    case (b, *_): pass\n    case c, d:\n        pass\n",
    "match x:\n    case {'k': v, 1: w, **rest}:\n        pass\n    case P(1, y=2, z=(a | b)) as p:\n        pass\n",
    # libcst's MatchTuple is a sequence in parentheses of its own, its MatchList any other one.
    "match (x):\n    case ([a, b]) | ((a, b)) | (a) | () | (a,) | _:\n        pass\n",
    "match x:\n    case (a), (b):\n        pass\n    case ('(', x), ')':\n        pass\n    case (a,  # (\n          b):\n        pass\n",
    # Parentheses around expressions, which neither `ast`'s positions nor libcst's hold (but
    # for a tuple's own in `ast`'s), comments and continued rows beside them.
    "x = f(\n    a,  # (\n    (b),\n    ((c)) ,\n    d \\\n    , (\n  e  # )\n  ), g(h)(i))\n",
    "y = (\n  # a comment (\n  z\n)\nw = \\\n  (v)\nu = [(t) for (t) in (s)]\n",
    "s = f('''\n# x ''', (\n  y\n))\n",  # a row of a string that starts with `#`
    "x = 'a\x0cb'; y = f((c), d)\nz = 'e\u2028'  + (g)\n",  # rows end only at \n, \r\n and \r
]


def _check(text: str) -> None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    try:
        built, ranges = module_from_ast(text, tree)
    except Unsupported:
        return
    parsed = cst.parse_module(text)
    assert list(differences(built, parsed))[:1] == []
    twins = pair_nodes(built, parsed)
    assert twins is not None
    lines = split_lines(text)
    positions = MetadataWrapper(parsed, unsafe_skip_copy=True).resolve(PositionProvider)
    for node_id, where in ranges.items():
        found = source_of(lines, where)
        if found is not None:
            assert found == parsed.code_for_node(twins[node_id]), where
        flat = flat_source_of(lines, where)
        if flat is not None:
            assert flat == " ".join(parsed.code_for_node(twins[node_id]).split()), where
        at = position_of(lines, where, isinstance(twins[node_id], cst.Tuple))
        if at is not None:
            libcsts = positions[twins[node_id]]
            assert at == (libcsts.start.line, libcsts.start.column, libcsts.end.line, libcsts.end.column), where


@pytest.mark.parametrize("text", AWKWARD)
def test_awkward_constructs(text: str) -> None:
    _check(text)
    built, _ = module_from_ast(text, ast.parse(text))  # none of them falls back to libcst
    assert built is not None


@pytest.mark.parametrize("chunk", range(8))
def test_every_file_of_the_repository(chunk: int) -> None:
    for path in FILES[chunk::8]:
        _check(path.read_text(encoding="utf-8"))


def test_what_is_not_built_is_parsed_by_libcst() -> None:
    text = "async def f():\n    await g()\n"
    with pytest.raises(Unsupported):
        module_from_ast(text, ast.parse(text))
    if sys.version_info >= (3, 12):  # type parameters: Python 3.12's ast reads them, 3.11's does not
        generic = "def f[T](x: T) -> T:\n    return x\n"
        with pytest.raises(Unsupported):
            module_from_ast(generic, ast.parse(generic))
        assert index_source("g.py", generic).blocks[0].statements()
    source = index_source("m.py", text)
    assert all(block.statements() for block in source.blocks)


def test_a_blocks_positions_and_text_are_libcsts() -> None:
    source = index_source("k.py", textwrap.dedent('''
        import jax.numpy as jnp

        @parameterized.product(dtype=(jnp.int8, (jnp.uint8)))
        def test_mma(self, dtype):
            acc = mgpu.mma(acc, a.astype(dtype), b)
    '''))
    block = source.blocks[-1]
    decorator = block.statements()[0].decorators[0].decorator
    elements = decorator.args[0].value.elements
    assert [block.code(e.value) for e in elements] == ["jnp.int8", "(jnp.uint8)"]
    spans = [block.span(e.value) for e in elements]
    assert [(s.start.line, s.start.column) for s in spans] == [(4, 30), (4, 41)]  # within its parentheses


class _Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[int, cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes[id(node)] = node
        return True


def test_a_blocks_spans_from_ast_are_libcsts_in_every_example() -> None:
    """`Block.span`'s positions from `ast`'s ranges, through the block's own rows (a class
    member is parsed inside `if 1:`), against libcst's positions of the same nodes."""
    compared = 0
    for path in sorted((ROOT / "examples").rglob("*.py")):
        for block in index_source(str(path), path.read_text(encoding="utf-8")).all_blocks():
            if block.kind == "class" and block.members:
                continue
            statements = block.statements()
            if block._built is None:
                continue
            collect = _Nodes()
            for statement in statements:
                statement.visit(collect)
            nodes = collect.nodes
            lines = block._lines_parsed()
            from_ast = {}
            for i, where in block._ranges.items():
                if i not in nodes:
                    continue  # a node the builder made and did not keep
                at = position_of(lines, where, isinstance(nodes[i], cst.Tuple))
                if at is not None:
                    from_ast[i] = block._span(*at)
            assert block._positions is None
            for i, span in from_ast.items():
                assert block.span(nodes[i]) == span  # what `span` gives before libcst parses
            block._positions = dict(MetadataWrapper(block._libcst_module(), unsafe_skip_copy=True)
                                    .resolve(PositionProvider))
            for i, span in from_ast.items():
                assert block.span(nodes[i]) == span, (path.name, block.label, type(nodes[i]).__name__)
                compared += 1
    assert compared > 20_000, compared


KEPT = textwrap.dedent('''
    import a; import b
    x = 1; y = (2,
      3)

    @decorate(1)
    def f(p, *q):
        return g(p, f"{q!r}")

    class A: z = 1

    class B(Base):
        """Its docstring."""
        w = 2; v = 3

        @parameterized.product(dtype=(jnp.int8, jnp.uint8))
        def test_mma(self, dtype):
            if dtype:
                pass
            elif not dtype: return mgpu.mma(acc, a.astype(dtype), b)
            else:
                pass

        class Inner:
            u = 4
''') + "def h():\n\x0c    return 1\n"


def test_a_checked_files_blocks_are_built_from_its_kept_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checked file keeps its `ast` tree (`lines.keep_tree`): its blocks (top-level ones,
    two statements on a row, a class's members inside `if 1:`) are built from that tree's
    statements, not parsed again, into what parsing their own rows builds; a block whose rows
    are not its own as written (a class's header, a form feed in its indentation) is parsed."""
    import mmalint.analysis.source as source_module
    import mmalint.lines as lines_module

    monkeypatch.setattr(lines_module, "_trees", [])
    parsed: list[str] = []
    parse = source_module._ast_tree
    monkeypatch.setattr(source_module, "_ast_tree", lambda text: parsed.append(text) or parse(text))
    compared = 0
    paths = [None, *sorted((ROOT / "examples").rglob("*.py"))[:40]]
    for i, path in enumerate(paths):
        text = KEPT if path is None else path.read_text(encoding="utf-8")
        kept = index_source(f"kept{i}.py", text, keep=True)
        # Another object with the same text, under another name: nothing kept, nothing shared.
        fresh = index_source(f"fresh{i}.py", (text + "\n")[:-1])
        for old, new in zip(fresh.all_blocks(), kept.all_blocks(), strict=True):
            header = new.kind == "class" and bool(new.members)
            old.statements()
            del parsed[:]
            new.statements()
            assert len(parsed) == int(header or "\x0c" in new.text), (path, new.label)
            assert list(differences(new._built, old._built))[:1] == []
            assert sorted(new._ranges.values()) == sorted(old._ranges.values())
            compared += 1
    assert compared > 500, compared
