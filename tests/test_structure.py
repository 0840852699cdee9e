"""The package's shape, read from its source (nothing is imported): no import cycle between
mmalint's modules, and no module over MAX_LINES lines.

Every `import mmalint...` and `from ... import` counts, relative or absolute, at module level,
inside a function or under `if TYPE_CHECKING:`: a cycle that only the type checker sees still
ties two layers together. `from pkg import name` depends on the submodule `pkg.name` where there
is one, else on the package itself; importing a submodule is not counted as depending on the
packages above it (Python runs their `__init__` first, but that is no cycle of the code's own).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mmalint"
MAX_LINES = 900

# Known exceptions, removed by issue 9's split of the interpreter from the library models: the
# integrator empties both once that lands. The tests fail on any cycle or long module not
# listed here, and on an entry that no longer holds, so the lists can only shrink.
# (`analysis.worlds` joins the cycle through its `if TYPE_CHECKING:` import of the interpreter.)
KNOWN_IMPORT_CYCLES: frozenset[frozenset[str]] = frozenset()
KNOWN_LONG_MODULES: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    """One module's dependency on another, where the source says so."""

    source: str  # the importing module
    target: str  # the imported module
    path: Path
    line: int
    text: str  # the import statement as written

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}  ({self.path.name}:{self.line}: {self.text})"


@dataclass(frozen=True)
class Package:
    modules: dict[str, Path]
    lines: dict[str, int]
    imports: tuple[Import, ...]


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_package(root: Path) -> Package:
    """Every module under `root` (a package directory), its length and its imports of the
    package's own modules."""
    sources = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    lines: dict[str, int] = {}
    imports: list[Import] = []
    for name, path in sources.items():
        text = path.read_text(encoding="utf-8")
        lines[name] = text.count("\n")
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(text, str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, name, is_package, sources):
                if target != name:
                    statement = ast.get_source_segment(text, node) or ""
                    imports.append(Import(name, target, path, node.lineno, " ".join(statement.split())))
    return Package(sources, lines, tuple(imports))


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict[str, Path]
) -> list[str]:
    """The package's modules that an import statement depends on."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
    if len(submodules) < len(node.names) and base in modules:
        submodules.append(base)  # some names are the package's own, not submodules
    return submodules


def cycles(package: Package) -> list[frozenset[str]]:
    """The strongly connected components of the import graph with more than one module."""
    graph: dict[str, set[str]] = {name: set() for name in package.modules}
    for imp in package.imports:
        graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the package is far shallower than the stack
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(package: Package, component: frozenset[str]) -> str:
    """The modules of a cycle and every import that ties them together, where it is written."""
    edges = [imp for imp in package.imports if imp.source in component and imp.target in component]
    lines = "\n".join(f"    {imp}" for imp in sorted(edges, key=lambda imp: (imp.source, imp.line)))
    return f"import cycle between {', '.join(sorted(component))}:\n{lines}"


def test_no_import_cycle() -> None:
    package = read_package(PACKAGE)
    found = cycles(package)
    new = [describe(package, c) for c in found if c not in KNOWN_IMPORT_CYCLES]
    assert not new, "\n".join(new)
    gone = [sorted(c) for c in KNOWN_IMPORT_CYCLES if c not in found]
    assert not gone, f"no longer a cycle: remove {gone} from KNOWN_IMPORT_CYCLES"


def test_no_module_is_over_the_line_limit() -> None:
    package = read_package(PACKAGE)
    over = {name: n for name, n in package.lines.items() if n > MAX_LINES}
    new = {name: n for name, n in over.items() if name not in KNOWN_LONG_MODULES}
    assert not new, f"modules over {MAX_LINES} lines: {new}"
    gone = sorted(KNOWN_LONG_MODULES - over.keys())
    assert not gone, f"no longer over {MAX_LINES} lines: remove {gone} from KNOWN_LONG_MODULES"


def test_a_cycle_is_found_through_every_kind_of_import(tmp_path: Path) -> None:
    """The reader itself: relative imports, imports in functions and under TYPE_CHECKING, and
    `from package import submodule`, each close a cycle; its message names the lines."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "def f():\n    from .. import c\n",
        "c.py": "import os\nfrom .sub.d import x\n",
        "sub/d.py": "from pkg import a, os_name\nx = 1\n",
        "e.py": "import pkg.a\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    package = read_package(root)
    assert cycles(package) == [frozenset({"pkg.a", "pkg.sub.b", "pkg.c", "pkg.sub.d"})]
    message = describe(package, cycles(package)[0])
    assert message.splitlines() == [
        "import cycle between pkg.a, pkg.c, pkg.sub.b, pkg.sub.d:",
        "    pkg.a -> pkg.sub.b  (a.py:3: from pkg.sub import b)",
        "    pkg.c -> pkg.sub.d  (c.py:2: from .sub.d import x)",
        "    pkg.sub.b -> pkg.c  (b.py:2: from .. import c)",
        "    pkg.sub.d -> pkg.a  (d.py:1: from pkg import a, os_name)",
    ]
    assert package.lines["pkg.a"] == 3
