"""The modules of the checked tree: which file an import of its own modules names, each module
indexed once (by its content), and the import graph (`program.py` asks which names of them
lead to an MMA call).

Where a module is looked for, as Python finds it for a test or a script and as ruff's `src`
setting says (pyright and ty do the same with their search paths):

1. the importing file's base directory: the first directory above it that is not a package
   (no `__init__.py`), which Python puts first on `sys.path` for a script and pytest for a test;
2. each source root (`src`, by default the project root and its `src/`), in order.

A dotted name is a package directory per part (`__init__.py`, or a namespace package without
one), then a module `part.py`; a regular package or module wins over a namespace portion, as
in Python's own finder. Names a model knows (`jax`, `numpy`...) and the standard library's
are never the tree's: a project file `jax.py` does not hijack jax. A relative import resolves
against the importing file's dotted name below its source root; one that climbs above the
top-level package names nothing.

A module is indexed (Python's `ast`, no libcst) the first time something asks for it, once
per process and content (`indexes`); the interpreter then parses and runs only the blocks
whose names it reads.

A program may keep a record of what it reads of the tree (`tree.Observed`): each text with the
hash of its bytes, each path it asks about, each scan over the whole tree with its answer. The
result cache (`pipeline/cache.py`) keeps it beside a file's result, as that result's inputs;
such a program checks one file, so that its record is that file's alone.

Nothing here imports or runs what it reads.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mmalint.analysis import indexes, names
from mmalint.analysis.imports import ImportStmt, scanned
from mmalint.analysis.model_words import modelled
from mmalint.tree import (
    Decode,
    Observed,
    ProgramSpec,
    display_name,
    is_dir,
    is_file,
    new_run,
    read_text,
    utf8,
)

# Resolving and walking the import graph loads neither libcst nor the models: a check of files
# that name no MMA API reads only that much.
if TYPE_CHECKING:
    from mmalint.analysis.source import SourceFile

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__"}
_IDENTIFIER = re.compile(r"[^\W\d]\w*\Z")


@dataclass(frozen=True)
class ModuleRef:
    """A module of the tree an import names."""

    name: str  # dotted
    path: str  # the file (`__init__.py` of a package), or a namespace package's directory
    package: bool

    @property
    def has_source(self) -> bool:
        return not os.path.isdir(self.path)


@dataclass(frozen=True)
class Binding:
    """What an import statement binds to a module of the tree: `bound` (None for a package
    only imported on the way) names the module `ref` itself, or its attribute `attr` (`*`
    for a star import) when the statement is `from ref import attr`."""

    bound: str | None
    ref: ModuleRef
    attr: str | None = None


@dataclass
class _Resolved:
    """Where the imports of a run's programs led, shared by those of one process and source
    roots (a worker of `mmalint check` makes one per checked file when it keeps records): the
    tree is taken as it was when the run began, as `_WALKS` takes it. Each entry keeps the path
    probes its computation made (`probes`, by `Program._recording`'s key), so that a program
    using it records them as its own."""

    found: dict[tuple[str, tuple[str, ...]], ModuleRef | None] = field(default_factory=dict)  # (directory, parts)
    bases: dict[str, str] = field(default_factory=dict)  # directory -> its base directory (`_base_dir`)
    names: dict[str, str | None] = field(default_factory=dict)  # real path -> dotted name
    edges: dict[tuple[str, str | None], tuple[str, ...]] = field(default_factory=dict)  # (path, text)
    probes: dict[tuple[str, object], dict[str, bool]] = field(default_factory=dict)


_RESOLVED: dict[tuple[str, tuple[str, ...]], _Resolved] = {}


def _resolved(run: str, roots: tuple[str, ...]) -> _Resolved:
    key = (run, roots)
    found = _RESOLVED.get(key)
    if found is None:
        if len(_RESOLVED) >= 8:
            _RESOLVED.clear()
        found = _RESOLVED[key] = _Resolved()
    return found



class Modules:
    """The files of the checked tree as one run of the analysis reads them: their texts, their
    indexes, their names and what their imports name (`Program` adds which lead where)."""

    def __init__(self, spec: ProgramSpec, decode: Decode | None = None, observed: Observed | None = None) -> None:
        self.spec = spec
        # What this program reads of the tree, for the result cache (`tree.Observed`): kept by
        # a program that checks one file, so that its record is that file's alone.
        self.observed = observed
        self._digests: dict[str, str | None] = {}  # real path -> hash of the bytes read
        self._decode = decode or utf8
        self._overlays = dict(spec.overlays)
        self._named = dict(spec.named)
        self._paths: dict[int, str | None] = {}  # id(SourceFile) -> its real path
        self._sources: dict[str, SourceFile | None] = {}  # real path -> indexed module
        self._texts: dict[str, str | None] = {}
        self._imports: dict[str, tuple[ImportStmt, ...]] = {}
        # What is shared with the run's other programs in this process (`_resolved`, and
        # `program._WALKS`); a program of no run shares nothing.
        self._run = spec.run or new_run()
        resolved = _resolved(self._run, spec.roots)
        self._found = resolved.found
        self._bases = resolved.bases
        self._names = resolved.names
        self._edges = resolved.edges
        self._memo_probes = resolved.probes
        self._captures: list[dict[str, bool]] = []
        self._displayed: dict[str, str] = {}  # display name -> real path
        self._keep: list[SourceFile] = []  # sources handed out: their ids stay theirs

    # ------------------------------------------------------------------ files and names

    @contextmanager
    def checking(self, source: SourceFile) -> Iterator[None]:
        """While the enclosed analysis runs, `source` is the program's text of its file (the
        checked file: its callers elsewhere import this text, an editor's unsaved buffer or a
        fix being verified); afterwards the file is what it was. What was derived from the
        file's text is forgotten only when the text differs."""
        real = real_path(source.filename)
        self._paths[id(source)] = real
        self._keep.append(source)
        if self.observed is not None and self.observed.own is None:
            self.observed.own = real
        if real is None:
            yield
            return
        before = self._text(real)
        had_source = real in self._sources
        old_source = self._sources.get(real)
        if before != source.text:
            self._forget(real)
        self._texts[real] = source.text
        self._sources[real] = source
        if source.filename == self.display(real):
            indexes.share(real, source)
        try:
            yield
        finally:
            if before != source.text:
                self._forget(real)
            self._texts[real] = before
            if had_source:
                self._sources[real] = old_source
            else:
                self._sources.pop(real, None)

    def edited(self, path: str, text: str) -> None:
        """The file at real `path` is `text` now, in the editor (the language server's re-run
        of one root, `lsp/rerun.py`, which patched its index in place): what was derived from
        its old text is forgotten."""
        if path in self._overlays:
            self._overlays[path] = text
        if path in self._texts:
            self._texts[path] = text
        self._forget(path)

    def _forget(self, path: str) -> None:
        """What was derived from a file's text, when the text changes."""
        self._imports.pop(path, None)

    def text_named(self, filename: str) -> str | None:
        """The text of a file of the tree as the reports name it (`display`)."""
        path = self._displayed.get(filename)
        return self._text(path) if path is not None else None

    def path_of(self, source: SourceFile) -> str | None:
        key = id(source)
        if key not in self._paths:
            self._paths[key] = real_path(source.filename)
            self._keep.append(source)
        return self._paths[key]

    def is_checked(self, source: SourceFile) -> bool:
        """Whether this run checks the file of `source` itself (then it reports what is in it)."""
        path = self.path_of(source)
        if path is None:
            return False
        answer = path in self.spec.checked
        if self.observed is not None:
            self.observed.is_checked(path, answer)
        return answer

    def module_name(self, source: SourceFile) -> str | None:
        path = self.path_of(source)
        return self._module_name(path) if path is not None else None

    def _module_name(self, path: str) -> str | None:
        """A file's dotted name below the innermost source root holding it, else below its
        base directory; None when a part is not an identifier."""
        if path in self._names:
            self._replay(("name", path))
            return self._names[path]
        base = None
        for root in sorted(self.spec.roots, key=len, reverse=True):
            if path.startswith(root.rstrip(os.sep) + os.sep):
                base = root
                break
        if base is None:
            with self._recording(("name", path)):
                base = self._base(path)
        relative = os.path.relpath(path, base)
        parts = relative.split(os.sep)
        parts[-1] = parts[-1][: -len(".py")] if parts[-1].endswith(".py") else parts[-1]
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts) if parts and all(_IDENTIFIER.match(p) for p in parts) else None
        self._names[path] = name
        return name

    def display(self, path: str) -> str:
        """How a report names a file of the tree: a checked file as the run names it, others by `display_name`."""
        return self._named.get(path) or display_name(path, self.spec.absolute)

    def find(self, dotted: str, importer: SourceFile | None) -> ModuleRef | None:
        """The module of the tree `import dotted` names in `importer`'s file, or None."""
        parts = tuple(dotted.split("."))
        if not parts or not all(_IDENTIFIER.match(p) for p in parts) or parts[0] in _STDLIB:
            return None
        path = self.path_of(importer) if importer is not None else None
        dirs = ([self._base(path)] if path is not None else []) + list(self.spec.roots)
        seen: set[str] = set()
        for directory in dirs:
            if directory in seen:
                continue
            seen.add(directory)
            found = self._find_in(directory, parts)
            if found is not None:
                return found
        return None

    def _find_in(self, directory: str, parts: tuple[str, ...]) -> ModuleRef | None:
        key = (directory, parts)
        if key in self._found:
            self._replay(("found", key))
            return self._found[key]
        with self._recording(("found", key)):
            result = self._look_in(directory, parts)
        self._found[key] = result
        return result

    def _look_in(self, directory: str, parts: tuple[str, ...]) -> ModuleRef | None:
        result: ModuleRef | None = None
        current = directory
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            package_dir = os.path.join(current, part)
            init = os.path.join(package_dir, "__init__.py")
            module_file = package_dir + ".py"
            if self._is_file(init):
                if last:
                    result = ModuleRef(".".join(parts), init, True)
                current = package_dir
            elif last and self._is_file(module_file):
                result = ModuleRef(".".join(parts), module_file, False)
            elif self._is_dir(package_dir):
                if last:
                    result = ModuleRef(".".join(parts), package_dir, True)
                current = package_dir
            else:
                break
        return result

    def _base(self, path: str) -> str:
        """`_base_dir` of a file, once per directory."""
        start = os.path.dirname(path)
        if start in self._bases:
            self._replay(("base", start))
            return self._bases[start]
        with self._recording(("base", start)):
            found = self._bases[start] = _base_dir(path, self._is_file)
        return found

    def _is_file(self, path: str) -> bool:
        answer = is_file(path)
        self._probed("f", path, answer)
        return answer

    def _is_dir(self, path: str) -> bool:
        answer = is_dir(path)
        self._probed("d", path, answer)
        return answer

    def _probed(self, kind: str, path: str, answer: bool) -> None:
        if self.observed is not None:
            self.observed.probe(kind, path, answer)
        for probes in self._captures:
            probes[f"{kind}:{path}"] = answer

    @contextmanager
    def _recording(self, key: tuple[str, object]) -> Iterator[None]:
        """The probes made (or replayed) while computing the memo entry `key`."""
        probes: dict[str, bool] = {}
        self._captures.append(probes)
        try:
            yield
        finally:
            self._captures.pop()
            self._memo_probes[key] = probes

    def _replay(self, key: tuple[str, object]) -> None:
        """A memo entry used again: the probes its computation made are made again, for the
        record being kept and the entries being computed."""
        probes = self._memo_probes.get(key)
        if not probes:
            return
        if self.observed is not None:
            self.observed.probes.update(probes)
        for outer in self._captures:
            outer.update(probes)

    def ref(self, name: str, path: str) -> ModuleRef:
        """The module of the tree a `ProjectModule` value names."""
        return ModuleRef(name, path, os.path.isdir(path) or os.path.basename(path) == "__init__.py")

    def submodule(self, parent: ModuleRef, attr: str) -> ModuleRef | None:
        """`parent.attr` when it is a module of the tree (a file or package in `parent`)."""
        if not parent.package or not _IDENTIFIER.match(attr):
            return None
        directory = parent.path if os.path.isdir(parent.path) else os.path.dirname(parent.path)
        found = self._find_in(directory, (attr,))
        if found is None:
            return None
        return ModuleRef(f"{parent.name}.{attr}", found.path, found.package)

    def absolute(self, importer: SourceFile | str | None, level: int, module: str) -> str | None:
        """The dotted name `from <dots><module> import` names in `importer`, or None when it
        climbs above the top-level package (or the importer is no module of the tree)."""
        if level == 0:
            return module or None
        path = importer if importer is None or isinstance(importer, str) else self.path_of(importer)
        if path is None:
            return None
        own = self._module_name(path)
        if own is None:
            return None
        parts = own.split(".")
        package = parts if os.path.basename(path) == "__init__.py" else parts[:-1]
        if not package or level - 1 >= len(package):
            return None
        base = ".".join(package[: len(package) - (level - 1)])
        return f"{base}.{module}" if module else base

    def source(self, path: str) -> SourceFile | None:
        """The indexed module at `path` (None: unreadable, not UTF-8, or a syntax error)."""
        if path in self._sources:
            return self._sources[path]
        from mmalint.analysis.source import SourceSyntaxError, index_source

        text = self._text(path)
        found: SourceFile | None = None
        if text is not None:
            display = self.display(path)

            def index() -> SourceFile | None:
                try:
                    # Syntax newer than this Python's (libcst's slow fallback) is unknown here.
                    return index_source(display, text, newer_syntax=False)
                except (SourceSyntaxError, RecursionError, MemoryError, ValueError):
                    return None

            found = indexes.index_of(path, text, index)
        self._sources[path] = found
        if found is not None:
            self._paths[id(found)] = path
            self._displayed[found.filename] = path
            self._keep.append(found)
        return found

    def _text(self, path: str) -> str | None:
        if path in self._texts:
            text = self._texts[path]
        else:
            text = self._overlays.get(path)
            if text is None:
                text, self._digests[path] = read_text(path, self._decode)
            self._texts[path] = text
        if self.observed is not None:
            self._observe_text(path)
        return text

    def _observe_text(self, path: str) -> None:
        """The file's text is an input of the result being computed (every time it is asked
        for: what a scan read first is not the scan's alone afterwards)."""
        assert self.observed is not None
        if self.observed.scanning:
            return
        if path in self._overlays:
            self.observed.cacheable = False  # an editor's buffer: the server keys by it (`keyed`)
        elif path not in self._digests and path != self.observed.own:
            self.observed.cacheable = self.observed.keyed = False  # a text no hash of the disk stands for
            return
        self.observed.text(path, self._digests.get(path))

    # ------------------------------------------------------------------ the import graph

    def imports(self, path: str) -> tuple[ImportStmt, ...]:
        """The import statements of a file, anywhere in it (a function's own imports too)."""
        found = self._imports.get(path)
        if found is None:
            text = self._text(path)
            found = self._imports[path] = scanned(text) if text is not None else ()
        elif self.observed is not None:
            self._observe_text(path)
        return found

    def resolve(self, importer: SourceFile | str, stmt: ImportStmt) -> list[Binding]:
        """What an import statement binds to modules of the tree (names a model knows, the
        standard library's and what the tree does not hold are not among them)."""
        found: list[Binding] = []
        if stmt.names:
            base = self.absolute(importer, stmt.level, stmt.module)
            if base is None:
                return found
            base_ref = None if modelled(names.module_for_import(base)) else self._find_from(base, importer)
            for name, asname in stmt.names:
                if name == "*":
                    if base_ref is not None:
                        found.append(Binding(None, base_ref, "*"))
                    continue
                canonical, _ = names.from_import(base, name)
                if modelled(canonical):
                    continue
                # The package's attribute when its `__init__` binds it, else the submodule:
                # both are looked at (`leading_imports`, the interpreter's `exec_import`).
                if base_ref is not None:
                    found.append(Binding(asname or name, base_ref, name))
                sub = self._find_from(f"{base}.{name}", importer)
                if sub is not None:
                    found.append(Binding(asname or name, sub, None))
            return found
        parts = stmt.module.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if modelled(names.module_for_import(prefix)):
                if i == 1 and stmt.asname is None:
                    return found  # `import jax.x.y` binds jax: the library's
                continue
            ref = self._find_from(prefix, importer)
            if ref is None:
                break
            if stmt.asname is not None:
                bound = stmt.asname if i == len(parts) else None
            else:
                bound = parts[0]
            found.append(Binding(bound, ref, None))
        return found

    def _find_from(self, dotted: str, importer: SourceFile | str | None) -> ModuleRef | None:
        if not isinstance(importer, str):
            return self.find(dotted, importer)
        parts = tuple(dotted.split("."))
        if not parts or not all(_IDENTIFIER.match(p) for p in parts) or parts[0] in _STDLIB:
            return None
        for directory in dict.fromkeys([self._base(importer), *self.spec.roots]):
            ref = self._find_in(directory, parts)
            if ref is not None:
                return ref
        return None

    def edges(self, path: str) -> tuple[str, ...]:
        """The files of the tree a file imports (each module a statement names, packages on
        the way included), from a scan of its text."""
        key = (path, self._text(path))  # of this text: another program's may be a buffer's
        found = self._edges.get(key)
        if found is None:
            targets: dict[str, None] = {}
            with self._recording(("edges", key)):
                for stmt in self.imports(path):
                    for binding in self.resolve(path, stmt):
                        if binding.ref.path != path:
                            targets[binding.ref.path] = None
            found = self._edges[key] = tuple(targets)
        else:
            self._replay(("edges", key))
        return found


# ---------------------------------------------------------------------- the file system


def real_path(filename: str) -> str | None:
    """The real path of a file as a report names it (None: standard input, a notebook cell...)."""
    if not filename or filename == "-" or filename.startswith("<"):
        return None
    try:
        return os.path.realpath(filename)
    except (OSError, ValueError):
        return None


def _base_dir(path: str, probe: Callable[[str], bool] = is_file) -> str:
    """The first directory above a file that is not a package: what Python puts on `sys.path`
    for a script there, and pytest (rootdir-less `prepend`) for a test."""
    directory = os.path.dirname(path)
    while probe(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory
