"""Which blocks of a module can reach an MMA call: a cheap text scan, before anything runs.

A block that names an MMA API is relevant, and so is a block that names a relevant function,
transitively: a test that calls a helper holding the `mma` call is run too (and binds the
helper's arguments). Across the files of the checked tree (`program.py`) an import of a name
that leads to an MMA call in another module is relevant the same way; `toward` asks the
narrower question a caller of a checked file answers: which blocks lead to *that* file.
"""

from __future__ import annotations

import ast
import functools
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from mmalint.analysis import names, reads
from mmalint.analysis.model_words import modelled
from mmalint.analysis.mutations import changed_names
from mmalint.analysis.prefilter import TRIGGER_TEXT, could_trigger
from mmalint.analysis.registries import registered_into, registrars
from mmalint.analysis.source import Block, SourceFile, is_import_block


@dataclass(frozen=True)
class Leading:
    """What the import statements of a block bind to things of the tree that lead where the
    scan looks (`program.Program.leading_imports`): names read like a relevant function's,
    and modules of which only some attributes do (`lowering.rule(` leads, `lowering.other(`
    does not)."""

    names: frozenset[str] = frozenset()
    attributes: tuple[tuple[str, frozenset[str]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.names or self.attributes)


NOTHING = Leading()
ImportedNames = Callable[[Block], Leading]


@dataclass(frozen=True)
class Closure:
    """The relevant blocks of a module, and the module-level names they bind."""

    blocks: tuple[Block, ...]  # the roots worth running: defs and module-level statements
    exported: frozenset[str]  # module-level names that lead there (what an importer may call)


def relevant(
    source: SourceFile,
    imported: ImportedNames | None = None,
    triggers: bool = True,
    seeds: frozenset[tuple[int, int]] = frozenset(),
    strict: bool = False,
) -> Closure:
    # Not the interpreter's reads: this scan reads every block, and an edit is weighed by what
    # the scan found (`reads.Scan`: what a block would have to name to join), not by having
    # been read.
    with reads.paused():
        return _relevant(source, imported, triggers, seeds, strict)


def _relevant(
    source: SourceFile,
    imported: ImportedNames | None,
    triggers: bool,
    seeds: frozenset[tuple[int, int]],
    strict: bool,
) -> Closure:
    """The blocks worth running: those that mention an MMA API (with `triggers`), those whose
    imports bind names leading to one elsewhere in the tree (`imported`), those named in
    `seeds` (by their first and last line), and those that call them.

    `strict` (the program's question about a module it loads) does not count an MMA word in a
    string or in the name of the module's own function or class: only code that uses the API.
    The checked file's own roots count those too (a docstring that names the API makes a root).

    A module-level name spreads where it is used bare (`helper(`, `kernel,`); a method's name
    only through `self.name` / `cls.name`, since `x.load_untiled` is far more often an API.
    """
    blocks = [b for b in source.all_blocks() if not (b.kind == "class" and b.members)]
    relevant_ids: set[int] = set()
    bare: set[str] = set()
    methods: set[str] = set()
    classes: set[str] = set()
    built: set[str] = set()  # classes whose making itself leads there (a relevant `__init__`)
    exported: set[str] = set()

    def learn(block: Block) -> None:
        if block.parent is None and (block.kind == "stmt" or block.first_line.startswith("@")):
            # `@register("int8") def kernel(...)`: whoever looks the table up may call it.
            into = registered_into(block, registrars(source))
            bare.update(into)
            exported.update(into)
        if block.kind == "def" and block.name:
            (methods if block.parent is not None else bare).add(block.name)
            if block.parent is not None and block.parent.name:
                classes.add(block.parent.name)  # whoever makes the object can call the method
                if block.name in _CONSTRUCTION:
                    built.add(block.parent.name)
                if block.parent.parent is None:
                    exported.add(block.parent.name)
            else:
                exported.add(block.name)
        elif block.parent is None and block.kind == "stmt":
            # `matmul = plgpu.kernel(body, ...)`: whoever calls `matmul` runs `body`; and
            # `KERNELS[k] = partial(body, ...)`: whoever looks it up in `KERNELS` does.
            changed = changed_names(block.text)
            bare.update(block.bound_names, changed)
            exported.update(block.bound_names, changed)
        elif block.parent is None and block.name:
            exported.add(block.name)  # a class kept whole (`class FusedOp(base.Op): pass`): making
            classes.add(block.name)  # an object of it, naming it, or a subclass's head leads too
            bare.add(block.name)

    foreign = _FOREIGN.get(source)
    if foreign is None:
        foreign = _FOREIGN[source] = foreign_modules(blocks)
    qualified: dict[str, set[str]] = {}
    for block in blocks:
        leading = imported(block) if imported is not None else NOTHING
        for alias, attributes in leading.attributes:
            qualified.setdefault(alias, set()).update(attributes)
        hit = (triggers and _triggered(block, foreign, strict)) or (block.start_line, block.end_line) in seeds
        if hit or leading.names:
            relevant_ids.add(id(block))
            if is_import_block(block):
                names_bound = leading.names | (block.bound_names if hit else frozenset())
                bare.update(names_bound)
                if block.parent is None:
                    exported.update(names_bound)
            else:
                learn(block)
    if qualified:
        for block in blocks:
            if id(block) in relevant_ids or is_import_block(block):
                continue
            if any(attr in qualified.get(alias, ()) for alias, attr in _QUALIFIED.findall(block.text)):
                relevant_ids.add(id(block))
                learn(block)
    # Each block's names, read once: bare (`helper(`, `kernel,`), through `self.`/`cls.`, and
    # bare names called (`Kernel(`); the closure below is then set intersections.
    # A method reads its class's decorators too: `@pytest.mark.parametrize("op", [A, B])` on a
    # test class gives each of its tests `op`.
    words = {id(b): _with_class_decorators(b) for b in blocks if id(b) not in relevant_ids and not is_import_block(b)}
    seen_classes: set[str] = set()
    seen_built: set[str] = set()
    seen_bare: set[str] = set()
    seen_methods: set[str] = set()
    # Classes whose bases lead there: an object of one may call an inherited method that does
    # (`class GeluOp(MatmulOp)` of another module, whose `__call__` launches the kernel).
    heads = [(b, _base_words(b)) for b in source.all_blocks() if b.kind == "class" and b.members and b.name]

    def inherit(leading: set[str]) -> None:
        for head, (base_names, base_attributes) in heads:
            name = head.name
            if name is None or name in classes:
                continue
            if not base_names.isdisjoint(leading) or any(
                    attr in qualified.get(alias, ()) for alias, attr in base_attributes):
                classes.add(name)
                bare.add(name)  # its subclasses' heads, and what names it, likewise
                if head.parent is None:
                    exported.add(name)

    inherit(bare | classes)
    while bare or methods or classes - seen_classes or built - seen_built:
        new_classes = classes - seen_classes
        seen_classes |= classes
        new_built = built - seen_built
        seen_built |= built
        wanted_bare, wanted_methods = bare, methods
        seen_bare |= bare
        seen_methods |= methods
        bare, methods = set(), set()
        inherit(seen_bare | seen_classes)
        for block in blocks:
            if id(block) in relevant_ids or is_import_block(block):
                continue
            block_bare, block_attrs, block_called = words[id(block)]
            if (
                not wanted_bare.isdisjoint(block_bare)
                or not wanted_methods.isdisjoint(block_attrs)
                or not new_built.isdisjoint(block_called)
                or _keeps_made(block, new_classes & block_called)
            ):
                relevant_ids.add(id(block))
                learn(block)
    roots = tuple(
        b for b in blocks
        if id(b) in relevant_ids and not is_import_block(b) and (b.kind == "def" or b.parent is None)
    )
    if reads.active is not None and source in reads.active.sources:
        reads.active.closures.append(reads.Scan(
            frozenset(b for b in blocks if id(b) in relevant_ids),
            reads.ScanFacts(foreign, {alias: frozenset(attrs) for alias, attrs in qualified.items()},
                            frozenset(seen_bare), frozenset(seen_methods), frozenset(seen_classes)),
        ))
    return Closure(roots, frozenset(exported))


def _base_words(block: Block) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """The bare names and `alias.attr` pairs of a class statement's bases (its head's `(...)`),
    read once a block however many scans ask (as `_words_of`)."""
    found = _BASES.get(block)
    if found is None:
        head = _CLASS_BASES.search(_class_head(block))
        bases = head.group(1) if head is not None else ""
        found = _BASES[block] = (frozenset(m.group(1) for m in _BARE.finditer(bases)), tuple(_QUALIFIED.findall(bases)))
    return found


_BASES: weakref.WeakKeyDictionary[Block, tuple[frozenset[str], tuple[tuple[str, str], ...]]] = (
    weakref.WeakKeyDictionary()
)
_CLASS_BASES = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\((.*?)\)[ \t]*:", re.MULTILINE | re.DOTALL)


# The methods that making an object runs: where one leads to an MMA call, so does every `C(`.
_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__"})


def _keeps_made(block: Block, made: set[str]) -> bool:
    """Whether a block that makes an object of `made` (classes with a method that leads to an
    MMA call) may go on to call a method of it: anything but a def whose every such object is
    what its own body returns, as it is made (`return FragmentedArray(...)`), is taken to.

    Run as a root, such a def hands the object to no one (a root's caller is nobody), so no
    method of it runs there; where it is called from another root, that root runs it, and what
    the caller does with the object, in its own run. A nested def or lambda's `return` counts
    as a use (its caller is the block itself), as does anything the tree cannot tell."""
    if not made:
        return False
    if block.kind != "def":
        return True
    found = _MADE.get(block)
    if found is None:
        found = _MADE[block] = _made_beyond_return(block)
    return found is None or not found.isdisjoint(made)


_MADE: weakref.WeakKeyDictionary[Block, frozenset[str] | None] = weakref.WeakKeyDictionary()


def _made_beyond_return(block: Block) -> frozenset[str] | None:
    """The names called bare in a def block other than as the value of one of its own
    `return`s; None when the text does not parse as one def."""
    text = block.text
    try:
        tree = ast.parse(f"if 1:\n{text}" if block.indent else text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body[0].body if block.indent and isinstance(tree.body[0], ast.If) else tree.body
    if len(body) != 1 or not isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returned: set[int] = set()
    pending: list[ast.AST] = list(body[0].body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            returned.add(id(node.value))
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and id(node) not in returned
    )


_BARE = re.compile(r"(?<![\w.])([^\W\d]\w*)(\s*\()?")
_QUALIFIED = re.compile(r"(?<![\w.])([^\W\d]\w*)\.([^\W\d]\w*)")
_SELF_ATTR = re.compile(r"\b(?:self|cls)\.([^\W\d]\w*)")


# A block's names, read once however many scans ask (a module's own roots, what its importers
# and callers ask of it): blocks live as long as their indexed module.
_WORDS: weakref.WeakKeyDictionary[Block, tuple[frozenset[str], frozenset[str], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


# A module's foreign modules, likewise (its import blocks parsed once, not once per scan).
_FOREIGN: weakref.WeakKeyDictionary[SourceFile, frozenset[str]] = weakref.WeakKeyDictionary()


# Whether a block names an MMA API (`_triggers`), by the question's foreign modules and
# strictness: a scan asks it of every block of a module, each edit of an editor's document.
_TRIGGERED: weakref.WeakKeyDictionary[Block, dict[tuple[frozenset[str], bool], bool]] = weakref.WeakKeyDictionary()


def _triggered(block: Block, foreign: frozenset[str], strict: bool) -> bool:
    asked = _TRIGGERED.get(block)
    if asked is None:
        asked = _TRIGGERED[block] = {}
    found = asked.get((foreign, strict))
    if found is None:
        found = asked[(foreign, strict)] = _triggers(block.text, foreign, strict)
    return found


def _with_class_decorators(block: Block) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """`_words_of` a block, with the bare names of its class's decorators for a method."""
    words = _words_of(block)
    parent = block.parent
    if block.kind != "def" or parent is None or parent.kind != "class" or not parent.first_line.lstrip().startswith("@"):
        return words
    found = _DECORATORS.get(parent)
    if found is None:
        head = _class_head(parent)
        statement = _CLASS_STATEMENT.search(head)
        found = _DECORATORS[parent] = _names_in(head[: statement.start() if statement is not None else len(head)])[0]
    return (words[0] | found, words[1], words[2]) if found else words


_DECORATORS: weakref.WeakKeyDictionary[Block, frozenset[str]] = weakref.WeakKeyDictionary()
_CLASS_STATEMENT = re.compile(r"^[ \t]*class\b", re.MULTILINE)


def _class_head(block: Block) -> str:
    """A class block's rows above its first member: its decorators and `class` statement."""
    first = block.members[0].start_line if block.members else block.end_line + 1
    return "".join(block.source.lines[block.start_line - 1 : first - 1])


def _words_of(block: Block) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    found = _WORDS.get(block)
    if found is None:
        found = _WORDS[block] = _names_in(block.text)
    return found


def _names_in(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(bare names, names after `self.`/`cls.`, bare names followed by `(`) of a block's text."""
    bare: set[str] = set()
    called: set[str] = set()
    for match in _BARE.finditer(text):
        bare.add(match.group(1))
        if match.group(2):
            called.add(match.group(1))
    return frozenset(bare), frozenset(_SELF_ATTR.findall(text)), frozenset(called)


_PREFIX = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.\Z")
_DEFINED = re.compile(r"\b(?:def|class)[ \t]+\Z")


@functools.lru_cache(maxsize=1024)  # a module's text, asked by each program of a process
def uses_api(text: str) -> bool:
    """Whether a module's code (not its comments, strings or own names) names an MMA API."""
    return _triggers(text, frozenset(), strict=True)


def _triggers(text: str, foreign: frozenset[str], strict: bool = False) -> bool:
    """Whether a block names an MMA API: a trigger word not reached through a module no model
    knows (`gpu_callbacks.wgmma` in jax's Pallas interpreter is its own function, whose
    canonical name no model has, so the analysis could record no call there)."""
    if not could_trigger(text):
        return False
    for match in TRIGGER_TEXT.finditer(text):
        at = match.start()
        if _in_comment(text, at):
            continue
        if strict and (_in_string(text, at) or _DEFINED.search(text, max(0, at - 12), at)):
            continue  # a string, or a function or class of the module's own named so
        before = _PREFIX.search(text, max(0, match.start() - 100), match.start())
        if before is None or before.group(1) not in foreign:
            return True
    return False


def _in_comment(text: str, at: int) -> bool:
    """Whether `at` follows a `#` that starts a comment on its line (outside any quotes)."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    hash_at = line.find("#")
    while hash_at >= 0:
        head = line[:hash_at]
        if head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            return True
        hash_at = line.find("#", hash_at + 1)
    return False


def _in_string(text: str, at: int) -> bool:
    """Whether `at` is inside a quoted string that starts on its line ("tcgen05_mma only
    allows ..." in an error message); a docstring's later lines are not seen."""
    i = text.rfind("\n", 0, at) + 1
    quote = ""
    while i < at:
        char = text[i]
        if not quote:
            if char == "#":
                return False
            if char in "\"'":
                quote = char * 3 if text.startswith(char * 3, i) else char
                i += len(quote)
                continue
        elif char == "\\":
            i += 2
            continue
        elif text.startswith(quote, i):
            i += len(quote)
            quote = ""
            continue
        i += 1
    return bool(quote)


def foreign_modules(blocks: list[Block]) -> frozenset[str]:
    """Names the module's imports bind to a module (or object) of which no model knows any
    attribute: `from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks`. A module of
    the checked tree is one too: its own names lead on through `imported`, not its words."""
    found: set[str] = set()
    for block in blocks:
        if block.parent is not None or not is_import_block(block):
            continue
        try:
            tree = ast.parse(block.text.strip())
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname is not None:
                        canonical = names.module_for_import(alias.name)
                        if not modelled(canonical):
                            found.add(alias.asname)
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
                for alias in stmt.names:
                    canonical, _ = names.from_import(stmt.module, alias.name)
                    if not modelled(canonical):
                        found.add(alias.asname or alias.name)
    return frozenset(found)
