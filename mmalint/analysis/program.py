"""The checked tree as a program: which file an import of its own modules names, each module
indexed once (by its content), and which of its names can reach an MMA call.

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

Loading is lazy twice over. A module is indexed (Python's `ast`, no libcst) the first time
something asks for it, once per process and content (`indexes`); the interpreter then
parses and runs only the blocks whose names it reads. Whether a module can lead to an MMA call
at all is decided first from the text: its import statements (a line scan) and the trigger
words, so a module that imports nothing that reaches an MMA call is never indexed for it.

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mmalint.analysis import indexes, names
from mmalint.analysis.imports import ImportStmt, import_words, scan_imports, scanned
from mmalint.analysis.model_words import modelled
from mmalint.analysis.prefilter import triggered
from mmalint.tree import (
    SCAN_IMPORTS,
    SCAN_TRIGGERED,
    Decode,
    Observed,
    ProgramSpec,
    display_name,
    is_dir,
    is_file,
    new_run,
    read_text,
    tree_words,
    utf8,
    walk,
)

# The import graph (resolving, walking, the prefilter's words) loads neither libcst nor the
# models: a check of files that name no MMA API reads only that much. Indexing and the
# relevance scans, which do, are loaded where they are first asked for.
if TYPE_CHECKING:
    from mmalint.analysis.relevance import Closure, Leading
    from mmalint.analysis.source import Block, SourceFile

# How far up the import graph callers of a checked file are looked for: a test that calls an
# op that calls the kernel module is two steps up.
MAX_CALLER_DEPTH = 3
# A run of at most this many files decides whether a file without an MMA word reaches one by
# walking its imports (what pre-commit pays for is what the file reaches), a larger one by
# one scan of the files it does not check (`Program.worth_running`).
EXACT_WALK_FILES = 64
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


class Program:
    """The modules of the checked tree, as one run of the analysis reads them."""

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
        self._closures: dict[tuple[str, str | None], Closure] = {}
        # The closures under way, outermost first: the import cycles each was cut at.
        self._under_way: dict[tuple[str, str | None], set[tuple[str, str | None]]] = {}
        self._reaches: dict[tuple[str, str | None], bool] = {}
        # What is shared with the run's other programs in this process (`_WALKS`); a program
        # of no run shares nothing.
        self._run = spec.run or new_run()
        resolved = _resolved(self._run, spec.roots)
        self._found = resolved.found
        self._bases = resolved.bases
        self._names = resolved.names
        self._edges = resolved.edges
        self._memo_probes = resolved.probes
        self._captures: list[dict[str, bool]] = []
        self._scan_of_unchecked = Observed()
        self._cannot_reach: set[str] = set()  # files that reach no unchecked MMA call
        self._unchecked_triggered: set[str] | None = None  # files of the tree that name an MMA API, not checked
        self._displayed: dict[str, str] = {}  # display name -> real path
        self._trigger_seen: dict[str, bool] = {}
        self._api_seen: dict[str, bool] = {}
        # Per checked file, the blocks its callers are looked for toward (`callers`).
        self._seeds: dict[str, frozenset[tuple[int, int]]] = {}
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
        self._trigger_seen.pop(path, None)
        self._api_seen.pop(path, None)
        self._imports.pop(path, None)
        self._closures.clear()
        self._reaches.clear()
        self._cannot_reach.clear()

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

    def _triggered(self, path: str) -> bool:
        """Whether a file's text names an MMA API (the prefilter's words), once per text."""
        found = self._trigger_seen.get(path)
        if found is not None and self.observed is not None:
            self._observe_text(path)
        if found is None:
            if path in self.spec.checked and path not in self._overlays and self.spec.triggered:
                found = path in self.spec.triggered
                if self.observed is not None:
                    self._text(path)  # its text decided it (the run checks the hash it read is this)
            else:
                text = self._text(path)
                found = text is not None and triggered(text)
            self._trigger_seen[path] = found
        return found

    def _uses_api(self, path: str) -> bool:
        """`_triggered`, and the words in code, not in a comment or string (`relevance.uses_api`)."""
        from mmalint.analysis.relevance import uses_api

        found = self._api_seen.get(path)
        if found is not None and self.observed is not None:
            self._observe_text(path)
        if found is None:
            text = self._text(path)
            found = self._api_seen[path] = self._triggered(path) and text is not None and uses_api(text)
        return found

    def may_reach(self, path: str, toward: str | None = None) -> bool:
        """Whether the file, or a file of the tree it imports (transitively), mentions an MMA
        API (`toward` None) or is the file `toward`: a text-level over-approximation that
        keeps the analysis from indexing modules that cannot matter."""
        key = (path, toward)
        if key in self._reaches:
            return self._reaches[key]
        seen = {path}
        todo = [path]
        result = False
        while todo and not result:
            current = todo.pop()
            if (toward is None and self._uses_api(current)) or current == toward:
                result = current != path or toward is None
                if result:
                    break
            for target in self.edges(current):
                if target not in seen and self._reaches.get((target, toward)) is not False:
                    seen.add(target)
                    todo.append(target)
        self._reaches[key] = result
        if not result:
            # Nothing reached from here does either: later questions about them stop here.
            for other in seen:
                if other != toward:
                    self._reaches.setdefault((other, toward), False)
        return result

    # ------------------------------------------------------------------ what leads to an MMA call

    def closure(self, path: str, toward: str | None = None) -> Closure:
        """The blocks of a module that lead to an MMA call (`toward` None), or to one in the
        file `toward` (its callers), and the module-level names that do."""
        if toward == path and path not in self._seeds:
            toward = None
        key = (path, toward)
        found = self._closures.get(key)
        if found is not None:
            return found
        from mmalint.analysis.relevance import Closure, relevant  # not for an answer already known

        empty = Closure((), frozenset())
        if key in self._under_way:
            # An import cycle: not followed twice. What was worked out meanwhile is partial, not
            # kept (an `__init__` asked while its `ops` was under way: `from .ops import f` led nowhere).
            for cut in self._under_way.values():
                cut.add(key)
            return empty
        source = self.source(path) if toward == path or self.may_reach(path, toward) else None
        if source is None:
            self._closures[key] = empty
            return empty
        self._under_way[key] = set()
        try:
            if toward == path:
                # The checked file itself, toward its undecided MMA calls: what leads to them.
                found = relevant(source, triggers=False, seeds=self._seeds[path], strict=True)
            else:
                found = relevant(
                    source, lambda block: self.leading_imports(source, block, toward),
                    triggers=toward is None, strict=True,
                )
        finally:
            cut = self._under_way.pop(key) - {key}
            for outer in self._under_way.values():
                outer.discard(key)  # done: those under way read it whole from here on
        if not cut:
            self._closures[key] = found
        return found

    def leads_to_mma(self, block: Block) -> bool:
        """Whether a block of a module of the tree can reach an MMA call (`closure`)."""
        path = self.path_of(block.source)
        if path is None:
            return False
        # By place: the closure may have been read from another copy of the same text.
        where = (block.start_line, block.end_line, block.name)
        return any((b.start_line, b.end_line, b.name) == where for b in self.closure(path).blocks)

    def exports(self, ref: ModuleRef, toward: str | None = None) -> frozenset[str]:
        """The names a module of the tree binds that lead to an MMA call (or to `toward`)."""
        if not ref.has_source:
            return frozenset()
        return self.closure(ref.path, toward).exported

    def _leads(self, binding: Binding, toward: str | None) -> bool:
        """Whether what an import binds leads to an MMA call (or to `toward`)."""
        ref = binding.ref
        if binding.attr is not None:
            return binding.attr in self.exports(ref, toward)
        if ref.has_source and self.exports(ref, toward):
            return True
        # A package: whatever of it the importer reaches through its submodules.
        return ref.package and self.may_reach(ref.path, toward)

    def leading_imports(self, source: SourceFile, block: Block, toward: str | None = None) -> Leading:
        """What the import statements of `block` bind to things of the tree that lead to an
        MMA call (or to the file `toward`): names, and modules of which some attributes do."""
        from mmalint.analysis.relevance import NOTHING, Leading

        text = block.text
        if "import" not in text:
            return NOTHING
        found: set[str] = set()
        modules: dict[str, frozenset[str]] = {}
        for stmt in scan_imports(text):
            bindings = self.resolve(source, stmt)
            for binding in bindings:
                bound, ref = binding.bound, binding.ref
                if binding.attr == "*":
                    found.update(self.exports(ref, toward))
                elif bound is None or bound in found:
                    continue
                elif binding.attr is None and ref.has_source and not ref.package and (stmt.names or stmt.asname or "." not in stmt.module):
                    # A module by an alias (`from pkg import lowering`, `import pkg.lowering as
                    # m`): only its attributes that lead there do.
                    exported = self.exports(ref, toward)
                    if exported:
                        modules[bound] = modules.get(bound, frozenset()) | exported
                elif self._leads(binding, toward) or (
                    not stmt.names and stmt.asname is None and any(self._leads(b, toward) for b in bindings)
                ):
                    # `import a.b.c` binds `a`: it leads there when a module on the way does.
                    found.add(bound)
        return Leading(frozenset(found), tuple(modules.items()))

    def callers(
        self, source: SourceFile, toward: Iterable[Block] | None = None
    ) -> list[tuple[SourceFile, tuple[Block, ...]]]:
        """Roots elsewhere in the tree that lead to the checked file's MMA calls (to those in
        the blocks `toward`, when given): the tests and ops that import it (or import what
        imports it, up to `MAX_CALLER_DEPTH` steps)."""
        target = self.path_of(source)
        if target is None:
            return []
        if toward is not None:
            seeds = frozenset((b.start_line, b.end_line) for b in toward)
            if self._seeds.get(target) != seeds:
                self._seeds[target] = seeds
                self._closures = {k: v for k, v in self._closures.items() if k[1] != target}
        elif target in self._seeds:
            del self._seeds[target]
            self._closures = {k: v for k, v in self._closures.items() if k[1] != target}
        if not self.closure(target, target if toward is not None else None).exported:
            return []
        found: list[tuple[SourceFile, tuple[Block, ...]]] = []
        for path in self._importers(target):
            caller = self.source(path)
            if caller is None:
                continue
            roots = self.closure(path, target).blocks
            if roots:
                found.append((caller, roots))
        return found

    def _importers(self, target: str) -> list[str]:
        """The files of the tree that import `target`, directly or through up to
        `MAX_CALLER_DEPTH` modules; nearest first."""
        found: dict[str, None] = {}
        frontier = [target]
        for _ in range(MAX_CALLER_DEPTH):
            words = {_module_word(p) for p in frontier}
            words.discard(None)
            nxt: list[str] = []
            candidates = {p for word in words if word for p in self._files_with(word, target)}
            for path in sorted(candidates):
                if path == target or path in found:
                    continue
                if any(t in frontier for t in self.edges(path)):
                    found[path] = None
                    nxt.append(path)
            if not nxt:
                break
            frontier = nxt
        return list(found)

    def _files_with(self, word: str, near: str) -> list[str]:
        """The files of the tree with an import statement that names `word` (as a module's
        or a package's part, or an imported name): those that may import its module."""
        where = self._walk_of(near)
        key = (self._run, where)
        if key not in _WORD_INDEXES:
            # Of the files as they are on disk, once per run and process (each checked file
            # may have a program of its own); an editor's buffers are looked at below.
            if len(_WORD_INDEXES) >= 2:
                _WORD_INDEXES.clear()
            words = tree_words(self.tree_files(near), lambda p: read_text(p, self._decode),
                               lambda text: import_words(scanned(text)), self.spec.memo, repr(where))
            _WORD_INDEXES[key] = (words.index, words.snapshot)
        index, snapshot = _WORD_INDEXES[key]
        found_files = [p for p in index.get(word, []) if p not in self._overlays]
        found_files += [p for p, text in self._overlays.items()
                        if p in snapshot and word in import_words(scanned(text))]
        if self.observed is not None:
            own = self.observed.own
            self.observed.scan(SCAN_IMPORTS, where, word, tuple(p for p in found_files if p != own), snapshot)
        return found_files

    @contextmanager
    def _scanning(self) -> Iterator[None]:
        """Reads of every file of a walk: the scan's snapshot, not inputs of the result."""
        if self.observed is None:
            yield
            return
        self.observed.scanning += 1
        try:
            yield
        finally:
            self.observed.scanning -= 1

    def _walk_of(self, near: str) -> tuple[tuple[str, ...], bool]:
        """`tree.walk`'s arguments for `tree_files(near)`."""
        if self.spec.tree:
            return (self.spec.tree, False)
        return ((self._base(near),), True)

    def tree_files(self, near: str) -> list[str]:
        """The Python files of the tree (`spec.tree`), walked once, bounded; without a project
        (no pyproject.toml, setup.cfg or .git above), the files beside `near` that Python could
        import it from: its base directory and the packages in it."""
        tops, packages_only = self._walk_of(near)
        key = (self._run, tops, packages_only)
        if key not in _WALKS:
            if len(_WALKS) >= 64:
                _WALKS.clear()
            _WALKS[key] = list(walk(tops, packages_only))  # once per run and process
        return _WALKS[key]

    def worth_running(self, path: str | None, text: str) -> bool:
        """Whether a file that mentions no MMA API may still reach one: it imports (through
        the tree) a module that does, in a file this run does not check (a checked one
        reports its own calls, with this file among its callers).

        A run that checks most of the tree first scans the files it does not check, once for
        all its files: when none of them names an MMA API, no file need be walked. A run of
        a few files in a large tree (pre-commit) walks each file's imports instead, and reads
        only what the file reaches: then the answer's record (`observed`) is the walk's, file
        by file, and holds for as long as those files and probes do.
        """
        if path is None or "import" not in text:
            return False
        exact = self.observed is not None
        if self.spec.tree and len(self.spec.checked) > EXACT_WALK_FILES:
            exact = False
            # Every module an import can name lies in the tree: when each of its files that
            # names an MMA API is checked by the run, no other file need be.
            if self._unchecked_triggered is None:
                with self._scanning():
                    unchecked = [p for p in self.tree_files(path) if p not in self.spec.checked]
                    self._unchecked_triggered = {p for p in unchecked if self._triggered(p)}
                self._scan_of_unchecked = Observed()
                self._scan_of_unchecked.scan(SCAN_TRIGGERED, (self.spec.tree, False), "", tuple(self._unchecked_triggered),
                                             {p: self._digests.get(p) for p in unchecked})
            if self.observed is not None:
                self.observed.merge(self._scan_of_unchecked)
            if not self._unchecked_triggered and all(r.startswith(self.spec.tree) for r in self.spec.roots):
                return False
        if self.observed is not None and not exact:
            # What follows reads the import graph through state shared by the run's files
            # (`_cannot_reach`: what an earlier file's walk found leads nowhere).
            self.observed.cacheable = self.observed.keyed = False
        if self._text(path) != text:
            # Not the file's text on disk (an editor's buffer): what was read of it is not this.
            self._forget(path)
            self._texts[path] = text
            self._digests.pop(path, None)
        seen = {path}
        todo = [path]
        while todo:
            current = todo.pop()
            for target in self.edges(current):
                if target in seen or (not exact and target in self._cannot_reach):
                    continue
                seen.add(target)
                checked = target in self.spec.checked
                if self._triggered(target):
                    if self.observed is not None:
                        self.observed.is_checked(target, checked)
                    if not checked:
                        return True
                todo.append(target)
        # Nothing the file reaches does: nor does anything it reaches, later asked.
        self._cannot_reach.update(seen)
        return False


# ---------------------------------------------------------------------- text scans

# Per run: the files of a walk of the tree, and which of them name each import word (with the
# hash of each file read): what the callers of a checked file are looked for among.
_WALKS: dict[tuple[str, tuple[str, ...], bool], list[str]] = {}
_WORD_INDEXES: dict[tuple[str, tuple[tuple[str, ...], bool]], tuple[dict[str, list[str]], dict[str, str | None]]] = {}


def _module_word(path: str) -> str | None:
    """The word an import of the file must contain: its module's (or package's) last name."""
    base = os.path.basename(path)
    if base == "__init__.py" or os.path.isdir(path):
        base = os.path.basename(os.path.dirname(path) if base == "__init__.py" else path)
    elif base.endswith(".py"):
        base = base[: -len(".py")]
    return base or None


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


__all__ = ["Binding", "ModuleRef", "Program", "ProgramSpec"]
