"""pytest's fixtures: what a test's parameters that no sweep binds are given.

`def test_matmul(dtype, compiler_params):` under `@pytest.mark.parametrize("dtype", ...)` gets
`compiler_params` from the fixture of that name: the test module's own, else the nearest
`conftest.py`'s up to pytest's rootdir (`Program.conftests`), as pytest looks it up. A fixture
runs like a function called with its own fixtures; what it returns is the parameter's value.
A fixture pytest parametrizes (`params=[A, B]`) and that gives each param as it is
(`return request.param`) runs the test once per param, a world each. Any other fixture that
asks `request`, or one this lookup cannot find (a plugin's, a class's), leaves the parameter
unknown, as before.
"""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter.core import Machine
from mmalint.analysis.source import Block, BlockParseError, SourceFile
from mmalint.analysis.values import ClassVal, ParamSet, Value
from mmalint.analysis.worlds import MAX_WORLDS, World, combine_axes, keyword_world

_DEPTH = 3  # fixtures asking fixtures, in a row


class Fixtures(Machine):
    """The values of a pytest test's fixtures."""

    def fixture_keywords(self, node: cst.FunctionDef, block: Block, cls: ClassVal | None,
                         given: int, named: set[str]) -> dict[str, Value]:
        """The fixtures' values of the test `node`'s parameters past the first `given` (after
        `self`) and not `named` by its world, that have no default (pytest asks no fixture
        for those); none for a unittest test case's method (pytest runs it as unittest)."""
        if not _pytest_test(node, block, cls):
            return {}
        params = list(node.params.params)[1 if cls is not None else 0:][given:]
        own = _class_fixtures(cls)
        found: dict[str, Value] = {}
        for param in params:
            name = param.name.value
            if param.default is not None or name in named or own is None or name in own:
                continue  # a fixture of the class (or a base's, not read) comes first
            value = self._fixture_value(name, block.source, _DEPTH)
            if value is not None:
                found[name] = value
        return found

    def fixture_worlds(self, node: cst.FunctionDef, block: Block, cls: ClassVal | None,
                       worlds: list[World]) -> list[World]:
        """The worlds again, once per param of each fixture pytest parametrizes that gives
        its param as it is (`@pytest.fixture(params=[A, B])` returning `request.param`), for
        the test's parameters a world leaves unbound: each value a binding of the world."""
        if not worlds or not _pytest_test(node, block, cls) or _class_fixtures(cls) is None:
            return worlds
        own = _class_fixtures(cls) or frozenset()
        positional = len(worlds[0].positional)
        axes: list[list[World]] = []
        for param in list(node.params.params)[1 if cls is not None else 0:][positional:]:
            name = param.name.value
            if param.default is not None or name in own or any(name in dict(w.keywords) for w in worlds):
                continue
            values = self._fixture_params(name, block.source)
            if values:
                axes.append([keyword_world([(name, value)]) for value in values])
        if not axes:
            return worlds
        return [world.combine(row) for world in worlds for row in combine_axes(axes)][:MAX_WORLDS]

    def _fixture_params(self, name: str, source: SourceFile) -> list[Value] | None:
        """The values of a fixture that gives each of its `params=` as it is; None for any
        other (or none found)."""
        fixture = self._fixture(name, source, parametrized=True)
        if fixture is None:
            return None
        node, block = fixture
        params = next((a.value for d in node.decorators if isinstance(d.decorator, cst.Call)
                       for a in d.decorator.args if a.keyword is not None and a.keyword.value == "params"), None)
        if params is None or not _returns_its_param(node):
            return None
        items = self.iterate(self.eval(params, self.module_of(block.source).frame, block))
        if items is None or not items or any(isinstance(item, ParamSet) for item in items):
            return None  # `pytest.param(..., marks=...)`: which run is not read here
        return list(items)

    def _fixture_value(self, name: str, source: SourceFile, depth: int) -> Value | None:
        fixture = self._fixture(name, source) if depth else None
        if fixture is None:
            return None
        node, block = fixture
        keywords: dict[str, Value] = {}
        complete = True
        for param in node.params.params:
            if param.default is not None:
                continue
            value = self._fixture_value(param.name.value, source, depth - 1) if param.name.value != "request" else None
            if value is None:
                complete = False  # `tmp_path`, `monkeypatch`, a plugin's: unknown
            else:
                keywords[param.name.value] = value
        func = self.make_function(node, block, self.module_of(block.source).frame)
        try:
            return self.call_function(func, Args([], keywords, [], {}, complete), node)
        except Diverges:
            return None  # `pytest.skip(...)` in the fixture: the test does not run

    def _fixture(self, name: str, source: SourceFile, parametrized: bool = False) -> tuple[cst.FunctionDef, Block] | None:
        """The fixture `name` a test of `source` gets: the module's own, else the nearest
        conftest's; None where none is found, or the one named so is parametrized or asks
        `request` (unless `parametrized`: then only such a one)."""
        sources = [source]
        if self.program is not None:
            sources += [s for path in self.program.conftests(source) if (s := self.program.source(path)) is not None]
        for module in sources:
            found = self._fixture_of(name, module, parametrized)
            if found is not False:
                return found if isinstance(found, tuple) else None
        return None

    def _fixture_of(self, name: str, module: SourceFile, parametrized: bool) -> tuple[cst.FunctionDef, Block] | bool | None:
        """The fixture `name` of one module; None where the module binds the name otherwise
        too (`from .helpers import compiler_params`: which one pytest gets is not read), or its
        fixture is parametrized or asks `request`; False where the module has none."""
        found: tuple[cst.FunctionDef, Block] | None = None
        for block in module.blocks:
            if block.kind != "def" or block.parent is not None or block.name is None:
                continue
            try:
                stmts = block.statements()
            except BlockParseError:
                continue
            node = stmts[0] if stmts else None
            if not isinstance(node, cst.FunctionDef):
                continue
            if _fixture_name(node) != name:
                continue
            asks = _parametrized(node) or any(p.name.value == "request" for p in node.params.params)
            if found is not None or asks != (parametrized and _parametrized(node)):
                return None
            found = node, block
        if found is None:
            return None if name in module.bindings else False
        if any(b is not found[1] for b in module.bindings.get(name, ())):
            return None  # bound again, otherwise
        return found


def _pytest_test(node: cst.FunctionDef, block: Block, cls: ClassVal | None) -> bool:
    """A test pytest collects and gives fixtures: `test_*` of the module, or of a `Test*`
    class that is no unittest test case."""
    if not node.name.value.startswith("test"):
        return False
    if cls is None:
        return block.parent is None
    head = cls.block.text.split(":", 1)[0] if cls.block is not None else ""
    return cls.name.startswith("Test") and "TestCase" not in head


def _returns_its_param(node: cst.FunctionDef) -> bool:
    """A fixture whose body (past a docstring) is `return request.param`."""
    body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and isinstance(
            body[0].body[0].value, cst.SimpleString | cst.ConcatenatedString):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    stmt = body[0].body[0]
    return isinstance(stmt, cst.Return) and stmt.value is not None and _dotted(stmt.value) == "request.param" and [
        p.name.value for p in node.params.params] == ["request"]


def _class_fixtures(cls: ClassVal | None) -> frozenset[str] | None:
    """The fixtures a test class defines itself; None where a base of it may define some
    (one this scan does not read)."""
    if cls is None:
        return frozenset()
    if cls.block is None or cls.bases:
        return None
    found = set()
    for member in cls.block.members:
        try:
            stmts = member.statements()
        except BlockParseError:
            return None
        node = stmts[0] if stmts else None
        if isinstance(node, cst.FunctionDef) and (registered := _fixture_name(node)) is not None:
            found.add(registered)
    return frozenset(found)


def _fixture_name(node: cst.FunctionDef) -> str | None:
    """The name pytest registers a `@pytest.fixture` function under (`name=` or its own);
    None for a function that is no fixture."""
    for decorator in node.decorators:
        expr = decorator.decorator
        call = expr if isinstance(expr, cst.Call) else None
        func = call.func if call is not None else expr
        if _dotted(func) not in ("pytest.fixture", "fixture"):
            continue
        for arg in call.args if call is not None else ():
            if arg.keyword is not None and arg.keyword.value == "name":
                return arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else ""  # type: ignore[return-value]
        return node.name.value
    return None


def _parametrized(node: cst.FunctionDef) -> bool:
    """`@pytest.fixture(params=...)`: a test runs once per param (`request.param`)."""
    return any(
        isinstance(d.decorator, cst.Call) and any(a.keyword is not None and a.keyword.value == "params"
                                                  for a in d.decorator.args)
        for d in node.decorators
    )


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None
