"""The checked tree as a program: which names of its modules can reach an MMA call, and the
files that lead to a checked file's calls (its callers). Which file an import names, and each
module's index, are `modules.py`'s.

Whether a module can lead to an MMA call at all is decided first from the text: its import
statements (a line scan) and the trigger words, so a module that imports nothing that reaches
an MMA call is never indexed for it; then by the relevance scan of its blocks (`relevance`).

Nothing here imports or runs what it reads.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mmalint.analysis.brackets import TOP_LEVEL_DEF
from mmalint.analysis.imports import STORED, index_words, scan_imports
from mmalint.analysis.modules import Binding, ModuleRef, Modules, real_path
from mmalint.analysis.mutations import (
    Functions,
    Handing,
    changed_or_handed_on,
    module_code,
    named_by_string,
    passed_on,
)
from mmalint.analysis.prefilter import triggered
from mmalint.tree import (
    SCAN_IMPORTS,
    SCAN_TRIGGERED,
    Decode,
    Observed,
    ProgramSpec,
    read_text,
    tree_words,
    walk,
)

# The relevance scans load libcst and the models: they are loaded where they are first asked for.
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


class Program(Modules):
    """The modules of the checked tree, as one run of the analysis reads them, and which of
    their names lead to an MMA call."""

    def __init__(self, spec: ProgramSpec, decode: Decode | None = None, observed: Observed | None = None) -> None:
        super().__init__(spec, decode, observed)
        self._closures: dict[tuple[str, str | None], Closure] = {}
        # The closures under way, outermost first: the import cycles each was cut at.
        self._under_way: dict[tuple[str, str | None], set[tuple[str, str | None]]] = {}
        self._reaches: dict[tuple[str, str | None], bool] = {}
        self._scan_of_unchecked = Observed()
        self._cannot_reach: set[str] = set()  # files that reach no unchecked MMA call
        self._unchecked_triggered: set[str] | None = None  # files of the tree that name an MMA API, not checked
        self._trigger_seen: dict[str, bool] = {}
        self._api_seen: dict[str, bool] = {}
        # Per checked file, the blocks its callers are looked for toward (`callers`).
        self._seeds: dict[str, frozenset[tuple[int, int]]] = {}
        self._changed_by: dict[tuple[str, str, bool], bool] = {}  # (module, global, handed) -> `changed_by_importers`
        self._stored_by: dict[tuple[str, str], bool] = {}  # (module, global) -> `stored_by_importers`
        self._handed_on_by: dict[tuple[str, str, Handing], bool] = {}  # -> `handed_on_by_importers`
        self._asked_of: dict[tuple[str, str], bool] = {}  # (module, question) -> `asked_of_importers`
        # (module, global, reading) -> `handed_on_through_functions`
        self._through_functions: dict[tuple[str, str, Handing], tuple[bool, tuple[tuple[str, Handing], ...]]] = {}
        self._skipping_hooks: dict[str, bool] = {}  # directory -> `skips_by_parameters`
        self._not_collected: dict[str, bool] = {}  # module -> `not_collected`
        # (registry module, its registrars) -> `registrations`
        self._registrations: dict[tuple[str, frozenset[str]], list[tuple[SourceFile, Block]] | None] = {}

    def _forget(self, path: str) -> None:
        """What was derived from a file's text when it changes: its imports, and which names
        lead where (those of any file may have read it)."""
        super()._forget(path)
        self._trigger_seen.pop(path, None)
        self._api_seen.pop(path, None)
        self._closures.clear()
        self._reaches.clear()
        self._cannot_reach.clear()
        self._changed_by.clear()
        self._stored_by.clear()
        self._handed_on_by.clear()
        self._asked_of.clear()
        self._through_functions.clear()
        self._skipping_hooks.clear()
        self._not_collected.clear()
        self._registrations.clear()

    # ------------------------------------------------------------------ which files name an MMA API

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
        reaches = toward == path or self.may_reach(path, toward)
        # A registry another module fills is looked at only toward a file (its callers): the
        # import words of the whole tree it needs are read there anyway, and a module's own
        # registrations are the relevance scan's (`relevance._relevant`'s `learn`).
        registers = toward is not None and toward != path
        source = self.source(path) if reaches or (registers and self._may_register(path)) else None
        seeds = self.registry_seeds(source, toward) if source is not None and registers else frozenset()
        if source is None or not (reaches or seeds):
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
                    triggers=toward is None, seeds=seeds, strict=True,
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

    def registrations(self, source: SourceFile, registrars: frozenset[str]) -> list[tuple[SourceFile, Block]] | None:
        """The top-level statements of the tree that call the module's `registrars` as they
        are imported (`registries.registrations`): in the module and in the files that may
        name one (`_registering_files`). None where some file uses one otherwise, which may
        register at any time."""
        from mmalint.analysis.registries import registrations  # with the relevance scans

        path = self.path_of(source)
        if path is None:
            return None
        key = (path, registrars)
        if key in self._registrations:
            return self._registrations[key]
        own = registrations(source, registrars, own=True)
        found: list[tuple[SourceFile, Block]] | None = None
        if own is not None:
            found = [(source, block) for block in own]
        for other in self._registering_files(path, registrars) if found is not None else ():
            module = self.source(other)
            blocks = registrations(module, registrars) if module is not None else None
            if module is None or blocks is None or found is None:
                found = None
                break
            found += [(module, block) for block in blocks]
        self._registrations[key] = found
        return found

    def _registering_files(self, path: str, registrars: frozenset[str]) -> list[str]:
        """The other files of the tree that may name one of a module's registrars: those with
        an import naming one (`from reg import register`, a package's re-export), or naming
        the module or a package above it (`import reg`, `pkg.reg.register(...)`), whose text
        has a registrar's name."""
        words = set(registrars)
        name = self._module_name(path)
        if name is not None:
            words.update(name.split("."))
        word = re.compile(r"(?<!\w)(?:" + "|".join(sorted(map(re.escape, registrars))) + r")\b")
        files = {p for w in words for p in self._files_with(w, path)} - {path}
        return sorted(p for p in files if (text := self._text(p)) is not None and word.search(text))

    def _may_register(self, path: str) -> bool:
        """Whether a module's text may hold a registry (`registries.registrar_candidates`)
        that another file's import names a registrar of (its own registrations are the
        relevance scan's): read cheaply, before the module is indexed."""
        text = self._text(path)
        if text is None:
            return False
        from mmalint.analysis.registries import registrar_candidates

        return any(p != path for name in registrar_candidates(text) for p in self._files_with(name, path))

    def registry_seeds(self, source: SourceFile, toward: str | None) -> frozenset[tuple[int, int]]:
        """The bindings of the module's registries (`registries.py`) that a function leading
        to an MMA call (or to the file `toward`) may be registered into, as relevance seeds: a
        function that looks the table up leads there too (`get_kernel("int8")(...)`). Read
        from the text of the files that register (a top-level row calling a registrar) and
        what they import, without indexing them."""
        from mmalint.analysis.registries import registering_texts, registry
        from mmalint.analysis.registries import registrars as registrars_of

        by_registrar = registrars_of(source)
        path = self.path_of(source)
        if not by_registrar or path is None:
            return frozenset()
        seeds: set[tuple[int, int]] = set()
        for name in sorted(frozenset().union(*by_registrar.values())):
            table = registry(source, name)
            if table is None:
                continue
            for other in self._registering_files(path, table.registrars):
                # What it registers names an MMA API itself (a kernel), in the file `toward`
                # or one that reaches it.
                texts = registering_texts(self._text(other) or "", table.registrars)
                if any(map(triggered, texts)) and (other == toward or self.may_reach(other, toward)):
                    seeds.add((table.binding.start_line, table.binding.end_line))
                    break
        return frozenset(seeds)

    def changed_by_importers(self, source: SourceFile, name: str, handed: bool = True) -> bool:
        """Whether a file of the tree that imports the module (directly or not) may change its
        global `name`, which the module's own text does not show (a table filled at import:
        `core.settling_chain`, or any container or object: `handing.changed_elsewhere`): stores
        into it, a mutating method, by its name or the module's (`m.T[k] = v`, `m.T = U`), hands
        it on (unless `handed` is False: `handed_on_by_importers` judged that, knowing the
        object), or names it by a string (`mutations.changed_or_handed_on`). One that only reads
        it (`from m import T`, `m.T["int8"]`, a star import's `T`) does not."""
        path = self.path_of(source)
        if path is None:
            return False
        key = (path, name, handed)
        found = self._changed_by.get(key)
        if found is None:
            word = re.compile(r"(?<!\w)" + re.escape(name) + r"\b")
            found = self._changed_by[key] = self._an_importer(
                path, lambda text: word.search(text) is not None and changed_or_handed_on(text, name, handed))
        return found

    def stored_by_importers(self, source: SourceFile, name: str) -> bool:
        """Whether another file of the tree may bind the module's global `name` again
        through it (`m.ACC = jnp.int32`, `monkeypatch.setattr(m, "ACC", v)`,
        `mock.patch("pkg.m.ACC", v)`, `mock.patch.multiple(m, ACC=v)`): code of the module
        that runs after import may see that value, whatever the value is. Looked up in the
        tree's index of the attribute names each file stores (`imports.stored_attributes`);
        such a file counts where its text names `m.ACC` or the module in a string, or it
        imports the module (a store needs a name bound to it)."""
        path = self.path_of(source)
        if path is None:
            return False
        key = (path, name)
        found = self._stored_by.get(key)
        if found is None:
            word = _module_word(path)
            dotted = f"{word}.{name}"
            storing = sorted(p for p in self._files_with(STORED + name, path) if p != path)
            naming = set(self._files_with(word, path)) if storing and word else set()
            found = self._stored_by[key] = any(
                _names_by_string(self._text(p) or "", word, dotted) or (p in naming and path in self.edges(p))
                for p in storing)
        return found

    def handed_on_by_importers(self, source: SourceFile, name: str, how: Handing) -> bool:
        """Whether a file of the tree that imports the module (directly or not) hands the
        object of its global `name` (or a container in it: `how`, as `handing.handed_on`) to other code, which may
        change it under another name (`mutations.passed_on`)."""
        path = self.path_of(source)
        if path is None:
            return False
        key = (path, name, how)
        found = self._handed_on_by.get(key)
        if found is None:
            self._handed_on_by[key] = True  # (asked again within: an import cycle)
            found = self._handed_on_by[key] = any(
                self._importer_hands_on(importer, name, how) for importer in self._importers(path))
        return found

    def _importer_hands_on(self, path: str, name: str, how: Handing) -> bool:
        """`handed_on_by_importers`' question of one importer: its text hands the object on,
        or names it by a string, or holds it in a table of its own (`ALL = (A, B)`) that it
        only reads and its own importers hand on or change."""
        text = self._text(path)
        if text is None or name not in text:
            return False
        held: list[tuple[str, Handing]] = []
        if passed_on(text, name, how, qualified=True, held_in=held,
                     functions=lambda bound: self._function_home(path, bound)) or named_by_string(text, name):
            return True
        source = self.source(path) if held else None
        return bool(held) and (source is None or self.tables_handed_on(source, held))

    def tables_handed_on(self, source: SourceFile, tables: Iterable[tuple[str, Handing]]) -> bool:
        """Whether a file of the tree importing the module hands on or changes one of its
        tables that hold an object (`passed_on`'s `held_in`: each table's name and reading)."""
        return any(self.handed_on_by_importers(source, table, how) or self.changed_by_importers(source, table)
                   for table, how in tables)

    def handed_on_through_functions(
        self, source: SourceFile, name: str, how: Handing
    ) -> tuple[bool, tuple[tuple[str, Handing], ...]]:
        """`handing.handed_on`'s text scan of the module again, an argument given to a function
        it imports from a module of the tree followed into it (`_function_home`); with the
        tables that hold the object (`passed_on`'s `held_in`)."""
        path = self.path_of(source)
        if path is None:
            return True, ()
        key = (path, name, how)
        found = self._through_functions.get(key)
        if found is None:
            held: list[tuple[str, Handing]] = []
            answer = passed_on(source.text, name, how, held_in=held,
                               functions=lambda bound: self._function_home(path, bound))
            found = self._through_functions[key] = (answer, tuple(held))
        return found

    def _function_home(self, path: str, bound: str, depth: int = 3) -> tuple[str, str, Functions] | None:
        """Where the function a file imports as `bound` (`from ops import run`) is defined,
        through a package's re-exports (up to `depth` modules): that module's code as the
        mutation scans read it (`module_code`), the function's name there, and this question
        of that module (`mutations.Functions`); None for anything else (a library's, a module,
        a name not found)."""
        for stmt in self.imports(path):
            real = next((n for n, asname in stmt.names if (asname or n) == bound), None)
            if real is None or real == "*":
                continue
            for binding in self.resolve(path, stmt):
                if binding.bound != bound or binding.attr is None or not binding.ref.has_source:
                    continue
                text = self._text(binding.ref.path)
                if text is None:
                    continue
                code = module_code(text)
                if TOP_LEVEL_DEF(real).search(code):
                    return code, real, functools.partial(self._function_home, binding.ref.path)
                if depth > 1 and (found := self._function_home(binding.ref.path, real, depth - 1)) is not None:
                    return found
        return None

    def mentioned_by_importers(self, source: SourceFile, word: str) -> bool:
        """Whether a file of the tree that imports the module (directly or not) has `word` in
        its text (`object.__setattr__`, which may set an attribute of any object)."""
        return self.asked_of_importers(source, f"mentions {word}", lambda text: word in text)

    def asked_of_importers(self, source: SourceFile, question: str, says: Callable[[str], bool]) -> bool:
        """Whether the text of a file of the tree that imports the module (directly or not)
        `says`, a test of the text that `question` names (the answer is kept under it)."""
        path = self.path_of(source)
        if path is None:
            return False
        key = (path, question)
        found = self._asked_of.get(key)
        if found is None:
            found = self._asked_of[key] = self._an_importer(path, says)
        return found

    def skips_by_parameters(self, source: SourceFile) -> bool:
        """Whether a `conftest.py` above the module (up to pytest's rootdir) has a hook that
        may skip or drop a test by its parameters (`pytest_collection_modifyitems` reading
        `item.callspec`, or its id: `item.name`, `item.nodeid`): which worlds of a sweep run
        is then not known."""
        path = self.path_of(source)
        if path is None:
            return False
        directory = os.path.dirname(path)
        found = self._skipping_hooks.get(directory)
        if found is None:
            found = self._skipping_hooks[directory] = any(
                _BY_PARAMETERS.search(text) is not None and _SKIPPING_HOOK.search(text) is not None
                and _SKIPS.search(text) is not None
                for text in map(self._text, self.conftests(source)) if text is not None)
        return found

    def not_collected(self, source: SourceFile) -> bool:
        """Whether pytest never collects the tests of a test module (`test_*.py`,
        `*_test.py`): a `conftest.py` above it (up to the rootdir) lists it, or a directory
        above it, in `collect_ignore`, or matches it by `collect_ignore_glob` (relative to
        that conftest's directory; every string of a statement naming either counts). A
        module with an `if __name__ == "__main__":` block may run its tests itself
        (`absltest.main()`): not that. (A library module in an ignored directory is no test
        module: its functions run when called.)"""
        path = self.path_of(source)
        base = os.path.basename(path or "")
        if path is None or not (base.startswith("test_") or base.endswith("_test.py")):
            return False
        found = self._not_collected.get(path)
        if found is None:
            found = self._not_collected[path] = self._ignored(path, source) and _MAIN_BLOCK.search(source.text) is None
        return found

    def _ignored(self, path: str, source: SourceFile) -> bool:
        """`not_collected`'s reading of the conftests."""
        for conftest in self.conftests(source):
            text = self._text(conftest)
            if text is None or "collect_ignore" not in text:
                continue
            base = os.path.dirname(conftest)
            for entry, is_glob in _ignored_entries(text):
                full = os.path.normpath(os.path.join(base, entry))
                if (fnmatch.fnmatchcase(path, full) if is_glob
                        else path == full or path.startswith(full.rstrip(os.sep) + os.sep)):
                    return True
        return False

    def conftests(self, source: SourceFile) -> list[str]:
        """The `conftest.py` files pytest reads for a test module: in its directory and those
        above it, up to pytest's rootdir (a directory with a pytest configuration); nearest
        first."""
        path = self.path_of(source)
        if path is None:
            return []
        found = []
        current = os.path.dirname(path)
        for _ in range(_MAX_CONFTEST_LEVELS):
            conftest = os.path.join(current, "conftest.py")
            if self._is_file(conftest):
                found.append(conftest)
            if any(self._is_file(os.path.join(current, marker)) for marker in _ROOTDIR_MARKERS):
                break  # pytest's rootdir: no conftest above it is read
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        return found

    def _an_importer(self, path: str, says: Callable[[str], bool]) -> bool:
        """Whether the text of some file importing `path` (`_importers`, nearest first) `says`."""
        return any((text := self._text(importer)) is not None and says(text) for importer in self._importers(path))

    def _importers(self, target: str) -> list[str]:
        """The files of the tree that import `target`, directly or through up to
        `MAX_CALLER_DEPTH` modules (a package's `__init__.py` on the way not counted: it
        re-exports what a test reaches through it); nearest first."""
        found: dict[str, None] = {}
        depth = {target: 0}
        frontier = [target]
        for _ in range(2 * MAX_CALLER_DEPTH):
            words = {_module_word(p) for p in frontier}
            words.discard(None)
            nxt: list[str] = []
            candidates = {p for word in words if word for p in self._files_with(word, target)}
            for path in sorted(candidates):
                if path == target or path in found:
                    continue
                below = [depth[t] for t in self.edges(path) if t in frontier]
                if not below:
                    continue
                steps = min(below) + (os.path.basename(path) != "__init__.py")
                if steps <= MAX_CALLER_DEPTH:
                    found[path] = None
                    depth[path] = steps
                    nxt.append(path)
            if not nxt:
                break
            frontier = nxt
        return list(found)

    def _files_with(self, word: str, near: str) -> list[str]:
        """The files of the tree with an import statement that names `word` (as a module's
        or a package's part, or an imported name): those that may import its module; or,
        for `STORED` and a name, those that may store an attribute of that name
        (`imports.index_words`)."""
        where = self._walk_of(near)
        key = (self._run, where)
        if key not in _WORD_INDEXES:
            # Of the files as they are on disk, once per run and process (each checked file
            # may have a program of its own); an editor's buffers are looked at below.
            if len(_WORD_INDEXES) >= 2:
                _WORD_INDEXES.clear()
            words = tree_words(self.tree_files(near), lambda p: read_text(p, self._decode),
                               index_words, self.spec.memo, repr(where))
            _WORD_INDEXES[key] = (words.index, words.snapshot)
        index, snapshot = _WORD_INDEXES[key]
        found_files = [p for p in index.get(word, []) if p not in self._overlays]
        found_files += [p for p, text in self._overlays.items()
                        if p in snapshot and word in index_words(text)]
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


_MAIN_BLOCK = re.compile(r"^if[ \t(]+__name__[ \t]*==[ \t]*[\"']__main__[\"']", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _ignored_entries(text: str) -> tuple[tuple[str, bool], ...]:
    """The strings of a conftest's statements naming `collect_ignore` (paths) or
    `collect_ignore_glob` (patterns): assignments, augmented ones, `append`/`extend` calls.
    Read with `ast` (nothing runs); a text that does not parse gives none."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr):
            continue
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
            n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        for name in ("collect_ignore", "collect_ignore_glob"):
            if name in names:
                found += [(c.value, name.endswith("glob")) for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value]
    return tuple(found)


_MAX_CONFTEST_LEVELS = 8  # directories above a test whose conftest.py is read
_ROOTDIR_MARKERS = ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# What may skip or drop a collected test (a `slow` mark does neither).
_SKIPS = re.compile(r"\b(?:skip\w*|xfail|deselect\w*)\b|\.(?:remove|pop)\(|\bdel\b|\[:\][ \t]*=")
# A pytest hook that sees each collected test (and may skip or drop it).
# `item.callspec` (also `getattr(item, "callspec", None)`), or the test's id, which holds its
# parameters (`item.name`, `item.nodeid`); not `item.keywords`, which hooks read for marks.
_BY_PARAMETERS = re.compile(r"\bcallspec\b|\.[ \t]*(?:name|nodeid)\b")
_SKIPPING_HOOK = re.compile(r"^def[ \t]+pytest_(?:collection_modifyitems|runtest_setup|runtest_call|itemcollected)\b",
                            re.MULTILINE)


def _names_by_string(text: str, word: str | None, dotted: str) -> bool:
    """Whether `text` names a module's global `m.NAME` (`dotted`), or the module in a string
    (`mock.patch.multiple("pkg.m", NAME=v)`): it may bind it without importing the module."""
    return dotted in text or (word is not None and (f'{word}"' in text or f"{word}'" in text))


def _module_word(path: str) -> str | None:
    """The word an import of the file must contain: its module's (or package's) last name."""
    base = os.path.basename(path)
    if base == "__init__.py" or os.path.isdir(path):
        base = os.path.basename(os.path.dirname(path) if base == "__init__.py" else path)
    elif base.endswith(".py"):
        base = base[: -len(".py")]
    return base or None


# ---------------------------------------------------------------------- the file system



__all__ = ["Binding", "ModuleRef", "Program", "ProgramSpec", "real_path"]
