"""Tables filled at import through functions of their module (registries), read from the text.

    KERNELS = {}

    def register(name):
        def deco(fn):
            KERNELS[name] = fn
            return fn
        return deco

    @register("int8")            # in this module or in any module of the tree that imports it
    def int8_kernel(...): ...

    register_recipe(Recipe("w8a8", ...))   # a top-level call does the same

A global changed by a function is otherwise unknown (`interpreter/core.py`: when the function
runs is not known). Here it is known: the functions that store into it (its registrars) run
only where a module's top level calls them, so once the modules are imported the table holds
what those calls stored. The interpreter runs each such statement in its module
(`interpreter/registries.py`); this module says which global is such a table, which
functions fill it, and where a module's text calls them (`registrations`). Anything else
(a registrar called in a function, handed on, renamed by an import; the table changed or
read at import, handed out) leaves the global unknown, as before.

Text scans only: nothing here parses or runs the code.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from mmalint.analysis import reads
from mmalint.analysis.mutations import code_of, passed_on
from mmalint.analysis.source import Block, SourceFile, is_import_block

# `T = {}`, `T: dict[str, Callable] = dict()`: an empty dict, the registry's start.
# `T = {}`, `T: dict[str, Callable] = dict()` at a module's top level: an empty dict, a
# registry's start (each row of a text; `match` on a block's rows).
_TOP_LEVEL_EMPTY = re.compile(r"^(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*(?:\{[ \t]*\}|dict[ \t]*\([ \t]*\))[ \t]*$", re.MULTILINE)
# `globals()`, `vars()`, `exec`: a global changed where no name says so.
_BY_NAME = re.compile(r"(?<![\w.])(?:globals|vars|exec|eval|setattr|__dict__)\b")
# What may follow the table's name where a registrar or a reader uses it.
_STORE = re.compile(r"[ \t]*\[[^\]\n]*\][ \t]*=(?!=)")  # `T[k] = v` (not `T[k] += v`)
_READ_AFTER = re.compile(r"[ \t]*(?:\[|\.[ \t]*(?:get|keys|items|values)[ \t]*\(|[:)\],]|\n|\Z)")
_READ_BEFORE = re.compile(r"(?:(?<![\w.])(?:not[ \t]+)?in[ \t]+|(?<![\w.])(?:len|sorted|list|tuple|set|frozenset)[ \t]*\([ \t]*)\Z")


@dataclass(frozen=True)
class Registry:
    """A global of a module filled only by calls of its registrars at import."""

    name: str
    binding: Block  # its one binding, to an empty dict
    registrars: frozenset[str]  # the module's top-level functions that store into it


def registry(source: SourceFile, name: str) -> Registry | None:
    """The registry the module's global `name` is, if it is one (see the module's text)."""
    return _tables(source).get(name)


def registrars(source: SourceFile) -> dict[str, frozenset[str]]:
    """Each registrar of the module's registries, with the registries it fills (the relevance
    scan: a function it registers leads wherever the table is read)."""
    by_registrar: dict[str, set[str]] = {}
    for table in _tables(source).values():
        for registrar in table.registrars:
            by_registrar.setdefault(registrar, set()).add(table.name)
    return {k: frozenset(v) for k, v in by_registrar.items()}


def _tables(source: SourceFile) -> dict[str, Registry]:
    """The module's registries by name, read once per module text."""
    reads.mutation_scan()  # decided by the whole text, as the interpreter's `rebound` is
    found = _REGISTRIES.get(source)
    if found is None:
        found = _REGISTRIES[source] = _registries(source)
    return found


_REGISTRIES: weakref.WeakKeyDictionary[SourceFile, dict[str, Registry]] = weakref.WeakKeyDictionary()


def _registries(source: SourceFile) -> dict[str, Registry]:
    text = source.text
    if "def " not in text or _TOP_LEVEL_EMPTY.search(text) is None:
        return {}
    if _BY_NAME.search(code_of(text)):
        return {}
    found: dict[str, Registry] = {}
    for block in source.blocks:
        if block.kind != "stmt" or block.parent is not None or len(block.bound_names) != 1:
            continue
        rows = block.rows
        match = _TOP_LEVEL_EMPTY.match(rows)
        if match is None or rows[match.end():] not in ("", "\n") or match.group(1) not in block.bound_names:
            continue
        name = match.group(1)
        if len(source.bindings.get(name, ())) != 1:
            continue
        table = _registry(source, name, block)
        if table is not None:
            found[name] = table
    return found


def _registry(source: SourceFile, name: str, binding: Block) -> Registry | None:
    """`name` (bound once, by `binding`) as a registry: every other top-level block that names
    it is a function that only stores into it by a key or reads it; the functions that store
    are called nowhere in the module but where a top-level statement registers with them."""
    word = re.compile(r"(?<![\w.])" + re.escape(name) + r"\b")
    registrars: set[str] = set()
    for block in source.blocks:
        if block is binding:
            continue
        rows = block.rows
        if name not in rows:
            continue
        code = code_of(rows)
        uses = list(word.finditer(code))
        if not uses:
            continue
        if block.kind != "def" or block.name is None:
            return None  # read or changed at import, or by a class: what it holds then is not known
        stores = False
        for use in uses:
            after = code[use.end():]
            if _STORE.match(after):
                stores = True
            elif not (_READ_AFTER.match(after) or _READ_BEFORE.search(code[: use.start()])):
                return None  # `global T`, `T.update(...)`, `return T`, `f(T)`...
        if passed_on(code, name):
            return None
        if stores:
            registrars.add(block.name)
    if not registrars:
        return None
    own = registrations(source, frozenset(registrars), own=True)
    if own is None:
        return None
    return Registry(name, binding, frozenset(registrars))


_TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


def registrar_candidates(text: str) -> set[str]:
    """The top-level functions of a module's text that store by a key into a global it binds
    to an empty dict at its top level: a cheap reading of what `registrars` may find, for a
    module not yet indexed."""
    tables = set(_TOP_LEVEL_EMPTY.findall(text))
    if not tables:
        return set()
    store = re.compile(r"^[ \t]+(?:" + "|".join(map(re.escape, sorted(tables))) + r")[ \t]*\[[^\]\n]*\][ \t]*=(?!=)",
                       re.MULTILINE)
    defs = [(m.start(), m.group(1)) for m in _TOP_LEVEL_DEF.finditer(text)]
    found = set()
    for match in store.finditer(text):
        owner = [name for at, name in defs if at < match.start()]
        if owner:
            found.add(owner[-1])
    return found


def registering_texts(text: str, registrars: frozenset[str]) -> list[str]:
    """The top-level statements of a module's text that may call one of `registrars` at
    import (`@register("k")` with the def it decorates, `register(Recipe(...))`), read
    cheaply before the module is indexed: each from its row to the next top-level row that is
    not a decorator or its def."""
    start = re.compile(r"^(?:@[ \t]*)?(?:\w+[ \t]*\.[ \t]*)*(?:" + "|".join(sorted(map(re.escape, registrars)))
                       + r")\b", re.MULTILINE)
    found = []
    for match in start.finditer(text):
        end = _NEXT_TOP_LEVEL.search(text, match.end())
        found.append(text[match.start() : end.start() if end is not None else len(text)])
    return found


# A row at the top level that starts a statement of its own (not a decorator's def, a comment,
# a closing bracket).
_NEXT_TOP_LEVEL = re.compile(r"\n(?=[^\s@#)\]}]|(?:async[ \t]+)?def\b|class\b)(?!(?:async[ \t]+)?def\b|class\b)")


# A top-level decorator row, or the start of a top-level statement, calling a dotted name.
_CALLEE = r"(?:\w+[ \t]*\.[ \t]*)*(?P<callee>\w+)"
_DECORATOR = re.compile(r"@[ \t]*" + _CALLEE + r"[ \t]*(?:\(|\n|\Z)")
_CALL_STATEMENT = re.compile(_CALLEE + r"[ \t]*\(")
_IMPORT_RENAME = re.compile(r"\bas\b")


def registrations(source: SourceFile, words: frozenset[str], own: bool = False) -> list[Block] | None:
    """The top-level blocks of a module that call one of the functions `words` (a registry's
    registrars) as they run at import: a def or class decorated by one, or a statement that
    is a call of one. None where the text uses one any other way (called in a function,
    handed on, imported under another name), which may register at any time. `own`: the
    registry's module, whose defs of them are not uses; another module that binds one of the
    names itself (not by an import) names its own function, and has none."""
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(sorted(map(re.escape, words))) + r")\b")
    if pattern.search(code_of(source.text)) is None:
        return []
    if not own and any(
        any(b.kind != "stmt" or not is_import_block(b) for b in source.bindings.get(w, ())) for w in words
    ):
        return []  # its own `register`, whatever an import says
    found: list[Block] = []
    for block in source.blocks:
        raw = block.rows
        if not any(w in raw for w in words):
            continue
        rows = code_of(raw)
        uses = list(pattern.finditer(rows))
        if not uses:
            continue
        if is_import_block(block):
            if _IMPORT_RENAME.search(rows):
                return None  # `from reg import register as r`: its uses go by another name
            continue
        if own and block.kind == "def" and block.name in words:
            body = rows.split(":", 1)[1] if ":" in rows else ""
            if pattern.search(body):
                return None  # it calls itself, or a registrar: registers when it runs
            continue
        registering = sum(callee in words for callee in _callees(rows, block))
        if registering != len(uses) or registering != 1 or block.parent is not None:
            return None  # used in a body or an argument; or registered twice by one statement
        found.append(block)
    return found


def registered_into(block: Block, by_registrar: dict[str, frozenset[str]]) -> frozenset[str]:
    """The registries (`registrars`' answer for the block's module) a top-level block
    registers into as it runs at import."""
    if not by_registrar or block.parent is not None:
        return frozenset()
    rows = code_of(block.rows)
    found: frozenset[str] = frozenset()
    for callee in _callees(rows, block):
        found |= by_registrar.get(callee, frozenset())
    return found


def _callees(rows: str, block: Block) -> list[str]:
    """The last names of what a top-level block calls at import: its decorators (`@reg.register(
    "k")`), or its own call where the statement is one (`register(Recipe(...))`)."""
    found = []
    for line in rows.splitlines():
        if not line.startswith("@"):
            break
        decorator = _DECORATOR.match(line)
        if decorator is not None:
            found.append(decorator.group("callee"))
    if block.kind == "stmt" and not rows[:1].isspace():
        call = _CALL_STATEMENT.match(rows)
        if call is not None:
            found.append(call.group("callee"))
    return found
