"""pytest's fixtures: what a test's parameters that no sweep binds are given.

`def test_matmul(dtype, compiler_params):` under `@pytest.mark.parametrize("dtype", ...)` gets
`compiler_params` from the fixture of that name: the test module's own, else the nearest
`conftest.py`'s up to pytest's rootdir (`Program.conftests`), as pytest looks it up. A fixture
runs like a function called with its own fixtures; what it returns is the parameter's value.
A fixture pytest parametrizes (`params=[A, B]`) runs the test once per param, a world each,
the fixture given it as `request.param`; so does an `indirect` parametrize's value. A fixture
this lookup cannot find (a plugin's, a class's base's), or whose name the module binds another
way too, leaves the parameter unknown, as before; so does anything of `request` but `.param`.
"""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter.core import Machine
from mmalint.analysis.source import Block, BlockParseError, SourceFile
from mmalint.analysis.values import (
    UNKNOWN,
    ClassVal,
    FixtureNames,
    Instance,
    Parametrize,
    ParamSet,
    Value,
)
from mmalint.analysis.worlds import MAX_WORLDS, World, binding, combine_axes, pytest_worlds

_DEPTH = 3  # fixtures asking fixtures, in a row


class Fixtures(Machine):
    """The values of a pytest test's fixtures."""

    def fixture_keywords(self, node: cst.FunctionDef, block: Block, cls: ClassVal | None,
                         given: int, named: set[str], params: dict[str, Value]) -> dict[str, Value]:
        """The fixtures' values of the test `node`'s parameters past the first `given` (after
        `self`) and not `named` by its world (`_candidates`), the fixtures of `params` given
        theirs as `request.param`."""
        found: dict[str, Value] = {}
        for place, name in _candidates(node, block, cls):
            if place < given or name in named:
                continue
            value = self._fixture_value(name, block.source, _DEPTH, (params[name],) if name in params else None)
            if value is not None:
                found[name] = value
        return found

    def fixture_worlds(self, node: cst.FunctionDef, block: Block, cls: ClassVal | None,
                       worlds: list[World]) -> list[World]:
        """The worlds again, once per param of each fixture pytest parametrizes
        (`@pytest.fixture(params=[A, B])`) of the test's parameters a world leaves unbound:
        each param the fixture's `request.param` there, and a binding of the world."""
        if not worlds:
            return worlds
        axes: list[list[World]] = []
        unbound = [(place, name) for place, name in _candidates(node, block, cls) if not (
            place < len(worlds[0].positional) or any(name in dict(w.keywords) or name in dict(w.indirect) for w in worlds))]
        generated = self._generated(node, block, [name for _, name in unbound]) if unbound else []
        if generated is None:
            # A hook may parametrize any of them, with values not known: pytest gives those
            # the hook's values, not their fixtures'. Each stays unknown.
            unknown = World(keywords=tuple((name, UNKNOWN) for _, name in unbound))
            return [world.combine(unknown) for world in worlds]
        axes.extend(generated)
        hooked = {b.name for axis in generated for w in axis for b in w.bindings}
        for _, name in unbound:
            if name in hooked:
                continue
            values = self._fixture_params(name, block.source)
            if values:
                axes.append([World(bindings=(binding(name, v),), indirect=((name, v),)) for v in values])
        if not axes:
            return worlds
        return [world.combine(row) for world in worlds for row in combine_axes(axes)][:MAX_WORLDS]

    def _generated(self, node: cst.FunctionDef, block: Block, names: list[str]) -> list[list[World]] | None:
        """The worlds the `pytest_generate_tests` hooks pytest calls for the test (the test
        module's, each conftest's up to the rootdir) give its parameters `names` no decorator
        binds: each hook run with a `metafunc` whose `fixturenames` holds the test's parameters
        and whose `parametrize` collects what it asks (`models/testing.py`). None where a hook
        may parametrize something not known (a call not sure to run, arguments not read, the
        hook ending in a raise): those parameters stay unknown, as without the hooks."""
        hooks = self._hooks(block.source)
        if not hooks:
            return []
        params = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params))
        axes: list[list[World]] = []
        for hook, where in hooks:
            calls: list[tuple[Args, bool]] = []
            metafunc = Instance(ClassVal("Metafunc", None, (), {}),
                                {"fixturenames": FixtureNames(params), "parametrize": Parametrize(calls)})
            func = self.make_function(hook, where, self.module_of(where.source).frame)
            saved = self._uncertainty, self._guarded
            self._uncertainty = self._guarded = 0
            try:
                self.call_function(func, Args([metafunc], {}, [], {}, True), hook)
            except Diverges:
                return None
            finally:
                self._uncertainty, self._guarded = saved
            for raw, sure in calls:
                worlds = pytest_worlds(raw.positional, raw.keywords) if sure and raw.complete else None
                if not worlds or not all(w.bindings for w in worlds):
                    return None
                if not {b.name for b in worlds[0].bindings} <= set(names):
                    return None  # a decorator's parameter too (pytest refuses), or not the test's
                axes.append(worlds)
        return axes

    def _pytest_modules(self, source: SourceFile) -> list[SourceFile]:
        """Where pytest looks up a test module's fixtures and hooks: the module, then each
        conftest above it up to the rootdir, nearest first."""
        sources = [source]
        if self.program is not None:
            sources += [s for path in self.program.conftests(source) if (s := self.program.source(path)) is not None]
        return sources

    def _hooks(self, source: SourceFile) -> list[tuple[cst.FunctionDef, Block]]:
        """The `pytest_generate_tests` functions pytest calls for a test of `source`: its
        own, and each conftest's above it."""
        found = []
        for module in self._pytest_modules(source):
            for block in module.bindings.get("pytest_generate_tests", ()):
                if block.kind != "def" or block.parent is not None:
                    continue
                try:
                    stmts = block.statements()
                except BlockParseError:
                    continue
                if stmts and isinstance(stmts[0], cst.FunctionDef):
                    found.append((stmts[0], block))
        return found

    def _fixture_params(self, name: str, source: SourceFile) -> list[Value] | None:
        """The `params=` of the fixture `name`, where pytest parametrizes it; None for any
        other (or none found, or a param `pytest.param` marks: which run is not read here)."""
        fixture = self._fixture(name, source)
        params = _params_of(fixture[0]) if fixture is not None else None
        if fixture is None or params is None:
            return None
        items = self.iterate(self.eval(params, self.module_of(fixture[1].source).frame, fixture[1]))
        if items is None or not items or any(isinstance(item, ParamSet) for item in items):
            return None
        return list(items)

    def _fixture_value(self, name: str, source: SourceFile, depth: int,
                       param: tuple[Value] | None = None) -> Value | None:
        """What the fixture `name` gives a test of `source`: its function run with its own
        fixtures and `request` (whose `.param` is `param`'s one value where given); None where
        pytest would give it a param not given here, or it is not found."""
        fixture = self._fixture(name, source) if depth else None
        if fixture is None:
            return None
        node, block = fixture
        if param is None and _params_of(node) is not None:
            return None  # parametrized: `fixture_worlds` gives each world its param
        keywords: dict[str, Value] = {}
        complete = True
        for arg in node.params.params:
            if arg.default is not None:
                continue
            if arg.name.value == "request":
                value: Value | None = _request(param)
            else:
                value = self._fixture_value(arg.name.value, source, depth - 1)
            if value is None:
                complete = False  # `tmp_path`, `monkeypatch`, a plugin's: unknown
            else:
                keywords[arg.name.value] = value
        func = self.make_function(node, block, self.module_of(block.source).frame)
        try:
            return self.call_function(func, Args([], keywords, [], {}, complete), node)
        except Diverges:
            return None  # `pytest.skip(...)` in the fixture: the test does not run

    def _fixture(self, name: str, source: SourceFile) -> tuple[cst.FunctionDef, Block] | None:
        """The fixture `name` a test of `source` gets: the module's own, else the nearest
        conftest's; None where none is found, or the module finding it binds the name
        otherwise too. Looked up once a root (each world of a sweep asks again)."""
        key = (id(source), name)
        kept = self._fixtures_found.get(key)
        if kept is None or kept[0] is not source:
            kept = self._fixtures_found[key] = (source, self._find_fixture(name, source))
        return kept[1]

    def _find_fixture(self, name: str, source: SourceFile) -> tuple[cst.FunctionDef, Block] | None:
        for module in self._pytest_modules(source):
            found = self._fixture_of(name, module)
            if found is not False:
                return found if isinstance(found, tuple) else None
        return None

    def _fixture_of(self, name: str, module: SourceFile) -> tuple[cst.FunctionDef, Block] | bool | None:
        """The fixture `name` of one module; None where the module binds the name otherwise
        too (`from .helpers import compiler_params`: which one pytest gets is not read), or
        defines two; False where the module has none."""
        found: tuple[cst.FunctionDef, Block] | None = None
        for block in module.blocks:
            if block.kind != "def" or block.parent is not None or block.name is None:
                continue
            try:
                stmts = block.statements()
            except BlockParseError:
                continue
            node = stmts[0] if stmts else None
            if not isinstance(node, cst.FunctionDef) or _fixture_name(node) != name:
                continue
            if found is not None:
                return None
            found = node, block
        if found is None:
            return None if name in module.bindings else False
        if any(b is not found[1] for b in module.bindings.get(name, ())):
            return None  # bound again, otherwise
        return found


def _request(param: tuple[Value] | None) -> Value:
    """pytest's `request` as a fixture sees it: its `.param` where pytest gives one; every
    other attribute unknown."""
    return Instance(ClassVal("FixtureRequest", None, (), {}), {"param": param[0]} if param is not None else {})


def _candidates(node: cst.FunctionDef, block: Block, cls: ClassVal | None) -> list[tuple[int, str]]:
    """The parameters of a test pytest gives fixtures, with their places after `self`: those
    with no default (pytest asks no fixture for those) that no fixture of the test class
    itself gives; none for anything but a pytest test (a unittest test case's method runs as
    unittest), nor where a base of the test class may have fixtures of its own."""
    own = _class_fixtures(cls) if _pytest_test(node, block, cls) else None
    if own is None:
        return []
    params = list(node.params.params)[1 if cls is not None else 0:]
    return [(place, p.name.value) for place, p in enumerate(params) if p.default is None and p.name.value not in own]


def _pytest_test(node: cst.FunctionDef, block: Block, cls: ClassVal | None) -> bool:
    """A test pytest collects and gives fixtures: `test_*` of the module, or of a `Test*`
    class that is no unittest test case."""
    if not node.name.value.startswith("test"):
        return False
    if cls is None:
        return block.parent is None
    if not cls.name.startswith("Test") or cls.block is None:
        return False
    # The class statement's rows (not the body: a test class may run to thousands of rows).
    first = cls.block.members[0].start_line if cls.block.members else cls.block.end_line + 1
    return "TestCase" not in "".join(cls.block.source.lines[cls.block.start_line - 1:first - 1])


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


def _params_of(node: cst.FunctionDef) -> cst.BaseExpression | None:
    """The `params=` of `@pytest.fixture(params=...)`: a test runs once per param."""
    return next((a.value for d in node.decorators if isinstance(d.decorator, cst.Call)
                 for a in d.decorator.args if a.keyword is not None and a.keyword.value == "params"), None)


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None
