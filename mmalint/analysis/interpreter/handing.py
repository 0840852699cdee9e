"""Which module globals' objects other code may change under another name: a list, dict or
set, or an object of a class of the module, that the module (or a file of the tree importing
it) hands on (`f(T)`, `U = T` then `U[k] = v`, `T.fix()`), reaches by a string (`globals()`),
or got back from a function of its own that keeps it (`T = register(Cfg())`). The interpreter
takes such a global as unknown rather than as the value its binding made (`core.global_value`).
Likewise a class whose attributes code may set out of the statements' order (`override(Cfg,
acc=v)`, `KINDS = {"int8": Cfg}`, `type(cfg).acc = v`, a decorator of the project): what its
body binds is unknown, read through the class or any object of it (`classes.class_attr`).

Text scans of the module (`mutations.passed_on`), as the mutation scan is: each answer notes
which names' uses it read (`reads.uses`), so that an edit naming none of them keeps it.
"""

from __future__ import annotations

import functools
import re
import weakref
from typing import TYPE_CHECKING, NamedTuple

from mmalint.analysis import reads
from mmalint.analysis.mutations import (
    ASSIGN_OP,
    MUTATING_CALL,
    Handing,
    code_of,
    mutation_words,
    names_in,
    passed_on,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    Api,
    ClassVal,
    DictVal,
    Func,
    Instance,
    MapVal,
    SetVal,
    TupleVal,
    Value,
    changes_in_place,
)

if TYPE_CHECKING:
    from mmalint.analysis.program import Program
    from mmalint.analysis.source import SourceFile

_MAX_BASES = 12  # how deep a chain of base classes is read
_MAY_CHANGE = (DictVal, MapVal, SetVal, TupleVal, Instance)  # or hold what does (a tuple)
_BEHIND_FROZEN = ("__setattr__", "__dict__")


def changed_elsewhere(source: SourceFile, name: str, value: Value, program: Program | None) -> bool:
    """Whether the global `name` of `source`, bound to `value` (a container Python changes in
    place, or an object of a class), may be changed under another name: its module or a
    module importing it hands the object on, or reaches it by a string; or a module importing
    it changes it (`m.T.insert(0, v)`, `m.T[k] = v`: the module's own changes are the
    mutation scan's)."""
    if not isinstance(value, _MAY_CHANGE):
        return False  # a dtype, a number, a function...: nothing of it changes in place
    attributes, calls_keep, methods = None, False, frozenset[str]()
    importers = program is not None
    if isinstance(value, Instance):
        if _hands_self(value.cls):
            return True  # `_ALL.append(self)` in `__init__`: every object of it is held elsewhere
        if not value.attrs and _only_methods(value.cls):
            # A sentinel (`UNSPECIFIED = Unspecified()`): only an attribute set on it through
            # another name could change it; its module is read, not the files importing it
            # (jax's `named_sharding.UNSPECIFIED`: 606 of them, in every run).
            importers = False
        shared = _class_members(value.cls) - value.attrs.keys()  # read from the class
        if shared and _class_reached(source, name, program):
            return True  # `kind = type(CFG); kind.acc = v`: the class under another name
        attributes = frozenset(k for k, v in value.attrs.items() if _mutable(v)) | (
            shared & _class_members(value.cls, containers=True))  # `o = CFG.opts` of `opts = {...}`
        if not attributes and _frozen(value.cls):
            # Nothing of it can change but by `object.__setattr__` or its `__dict__`.
            reads.uses(_BEHIND_FROZEN)
            return any(word in source.text for word in _BEHIND_FROZEN) or (
                program is not None and any(program.mentioned_by_importers(source, w) for w in _BEHIND_FROZEN))
        calls_keep = _methods_keep_attributes(value.cls)
        methods = frozenset() if calls_keep else _method_names(value.cls)
    nesting = _nesting(value)
    if not (nesting or attributes is not None or changes_in_place(value)):
        return False
    item_attributes, item_calls_keep = None, True
    if nesting:
        objects = [item for item in _innermost(value, nesting) if isinstance(item, Instance) and _kept_object(item)]
        if objects:
            item_attributes = frozenset(k for item in objects for k, v in item.attrs.items() if _mutable(v))
            # `TABLE["int8"].set_acc(v)`, `for c in TABLE.values(): c.set_acc(v)`: a method that
            # sets an attribute, called on an object the table holds.
            item_calls_keep = all(_methods_keep_attributes(item.cls) for item in objects)
    copies = not (isinstance(value, Instance) and copies_itself(value.cls))
    how = Handing(nesting, isinstance(value, DictVal | MapVal), attributes, calls_keep, methods, item_attributes, copies,
                  item_calls_keep, _row_places(value, nesting))
    if handed_on(source, name, how, program):
        return True
    return importers and program is not None and (
        program.handed_on_by_importers(source, name, how) or program.changed_by_importers(source, name, handed=False))


def class_changed_elsewhere(cls: ClassVal, name: str, program: Program | None) -> bool:
    """Whether code other than the class statements may set or change the attribute `name` the
    class (or a base of the module) binds in its body: the class handed on (`override(Cfg,
    acc=v)`, `KINDS = {"int8": Cfg}`, a decorator of the project, `type(obj)` or
    `obj.__class__` in a method), a class method that sets or hands on `cls` (`__init_subclass__`
    of a base too), a store through the name (`Cfg.acc = v`: the interpreter reads class
    members lazily, out of the statements' order), a container attribute going on (`o =
    Cfg.opts`), a metaclass of the project that may set it, or a store through any object's
    class (`type(c).acc = v`, `c.__class__.acc = v`), in its module or a file importing it. A
    class attribute read through the class or any object of it is then unknown.

    Each class's own module is read first, for every class of the lineage; the files importing
    them only then (a base of jax's tests has hundreds: their index costs more than the rest)."""
    classes = _lineage(cls).classes
    for c in classes:
        if c.block is None:
            return True
        facts = _facts(c.block)
        reads.uses(facts.decorators)
        if facts.changes_the_class or handed_on(c.block.source, c.name, facts.how, program):
            return True
        meta = dict(c.keywords).get("metaclass")
        if isinstance(meta, ClassVal) and _may_set(_set_by_metaclass(meta), name):
            return True
        if _may_set(_stored_through_objects(c.block.source), name):
            return True
    if program is None:
        return False
    for c in classes:
        assert c.block is not None
        if program.handed_on_by_importers(c.block.source, c.name, _facts(c.block).how) or program.asked_of_importers(
                c.block.source, f"class attribute {name}", lambda text: _may_set(_set_through_objects_of(text), name)):
            return True
    return False


def _may_set(names: frozenset[str] | None, name: str) -> bool:
    return names is None or name in names


def _set_by_metaclass(meta: ClassVal) -> frozenset[str] | None:
    """The attributes a metaclass (and its bases of the module) may set on its classes: those
    its methods store by name (`cls.acc = v`), or None (any) where one stores through a
    subscript, `setattr` or a namespace's method (`ns["acc"] = v`, `ns.update(...)`)."""
    found: set[str] = set()
    for c in _lineage(meta).classes:
        stored = None if c.block is None else _stored_by_class(c.block)
        if stored is None:
            return None
        found |= stored
    return frozenset(found)


def _stored_by_class(block: Block) -> frozenset[str] | None:
    """The attributes one class's methods store by name, None where any (once a block)."""
    if block not in _STORED_BY_CLASS:
        code = code_of(block.text)
        _STORED_BY_CLASS[block] = None if _ANY_STORE.search(code) else frozenset(_ATTRIBUTE_STORE.findall(code))
    return _STORED_BY_CLASS[block]


_STORED_BY_CLASS: weakref.WeakKeyDictionary[Block, frozenset[str] | None] = weakref.WeakKeyDictionary()


_ATTRIBUTE_STORE = re.compile(
    r"(?<![\w.])\w+[ \t]*\.[ \t]*(\w+)(?:[ \t]*\[[^\]\n]*\])*(?:" + ASSIGN_OP + r"|[ \t]*" + MUTATING_CALL + ")")
_ANY_STORE = re.compile(
    r"(?<![\w.])(?:setattr|delattr|vars)[ \t]*\(|__dict__|__setattr__|(?<![\w.])\w+(?:[ \t]*\[[^\]\n]*\])+"
    + ASSIGN_OP + r"|(?<![\w.])\w+[ \t]*" + MUTATING_CALL)


def _stored_through_objects(source: SourceFile) -> frozenset[str] | None:
    """`_set_through_objects` of a module's code, once a module."""
    reads.uses(("type", "__class__"))
    if source not in _THROUGH_OBJECTS:
        _THROUGH_OBJECTS[source] = _set_through_objects(_code(source))
    return _THROUGH_OBJECTS[source]


_THROUGH_OBJECTS: weakref.WeakKeyDictionary[SourceFile, frozenset[str] | None] = weakref.WeakKeyDictionary()


def _set_through_objects(code: str) -> frozenset[str] | None:
    """The class attributes a module's code (`code_of`) stores through an object's class
    (`type(c).acc = v`, `c.__class__.acc = v`), or None (any) where it binds such a class to a
    name (`k = type(c)`) or sets one by a string (`setattr(type(c), ...)`). (The words it reads
    are noted by `_stored_through_objects`, which class_changed_elsewhere asks first.)"""
    if "type" not in code and "__class__" not in code:
        return frozenset()
    if _ANY_THROUGH_AN_OBJECT.search(code):
        return None
    return frozenset(_STORED_THROUGH_AN_OBJECT.findall(code))


@functools.lru_cache(maxsize=64)
def _set_through_objects_of(text: str) -> frozenset[str] | None:
    """`_set_through_objects` of an importer's text."""
    return _set_through_objects(code_of(text)) if "type" in text or "__class__" in text else frozenset()


_AN_OBJECTS_CLASS = r"(?:(?<![\w.])type[ \t]*\([^()\n]*\)|\.[ \t]*__class__\b)"
_STORED_THROUGH_AN_OBJECT = re.compile(
    _AN_OBJECTS_CLASS + r"[ \t]*\.[ \t]*(\w+)(?:[ \t]*\[[^\]\n]*\])*(?:" + ASSIGN_OP + r"|[ \t]*" + MUTATING_CALL
    + ")")
_ANY_THROUGH_AN_OBJECT = re.compile(
    r"(?<![\w.])(?:setattr|delattr|vars)[ \t]*\([ \t]*(?:type[ \t]*\(|[\w.]*__class__\b)"
    + r"|" + _AN_OBJECTS_CLASS + r"[ \t]*\.[ \t]*__dict__"
    + r"|^[ \t]*\w+[ \t]*(?::[^=\n]*)?=[ \t]*(?:type[ \t]*\([^()\n]*\)|[\w.]+[ \t]*\.[ \t]*__class__)[ \t]*$",
    re.MULTILINE)


class _ClassFacts(NamedTuple):
    """What a class statement's own text says (its bases aside), read once a block."""

    changes_the_class: bool  # a decorator of the project, a method reaching its object's
    # class, a class method setting or handing on `cls`
    changes_its_objects: bool  # a method but the initializers sets an attribute of its object
    # or hands it on (`_changes_its_objects`)
    hands_its_objects_on: bool  # a method, `__init__` too, hands its object on (`_ALL.append(self)`)
    decorators: frozenset[str]  # the names its decorators start with
    members: frozenset[str]  # the names its body binds but by `def` or `class`
    method_names: frozenset[str]  # the names it defines by `def`
    how: Handing  # how its name is read (`attributes`: the members that may be containers)


def _facts(block: Block) -> _ClassFacts:
    found = _CLASS_FACTS.get(block)
    if found is None:
        code = code_of(block.text)
        row = _CLASS_ROW.search(code)
        decorators = frozenset(_DECORATOR.findall(code[: row.start()])) if row is not None else frozenset()
        objects, classes = _first_parameters(code)
        changes = (any(_from_the_project(block, name) for name in decorators) or bool(_CHANGES_ITS_CLASS.search(code))
                   or any(_sets_or_hands_on(code, first) for first in classes))
        members = frozenset(n for m in block.members if m.kind not in ("def", "class") for n in m.bound_names)
        how = Handing(attributes=_container_members(block), calls_keep=True, copies=False)
        found = _CLASS_FACTS[block] = _ClassFacts(
            changes, _changes_its_objects(code), _hands_its_objects_on(code, objects), decorators, members,
            frozenset(_DEF_NAME.findall(block.text)), how)
    return found


_CLASS_FACTS: weakref.WeakKeyDictionary[Block, _ClassFacts] = weakref.WeakKeyDictionary()
_CLASS_ROW = re.compile(r"^[ \t]*class\b", re.MULTILINE)
_DECORATOR = re.compile(r"^[ \t]*@[ \t]*(\w+)", re.MULTILINE)


def _sets_or_hands_on(code: str, this: str) -> bool:
    """Whether methods whose first parameter is `this` set an attribute of it or hand it on
    (`cls.acc = v`, `_ALL.append(cls)`; `cls(...)` makes an object, `cls.x` reads)."""
    patterns = _patterns(this)
    code = patterns.parameter.sub(r"\g<1>", code)
    return bool(patterns.sets.search(code) or patterns.handed_whole.search(code))


# A method that reaches its object's class (`type(self).acc = v`, `k = self.__class__`), but
# to read its name, test it or make an object of it (`type(self).__name__`, `type(self)(...)`).
_CHANGES_ITS_CLASS = re.compile(
    r"(?:__class__|(?<![\w.])type[ \t]*\([^()\n]*\))"
    r"(?![ \t]*(?:\.[ \t]*__(?:name|qualname|module)__\b|is\b|[=!]=|\())")


def _from_the_project(block: Block, name: str) -> bool:
    """Whether a decorator's first name is not bound by an import of a library that sets no
    attribute of the user's class (`dataclasses.dataclass`, `jtu.with_config`): it gets the
    class, and may set its attributes."""
    bindings = block.source.bindings.get(name, ())
    return not bindings or any(_LIBRARY_IMPORT.match(b.first_line) is None for b in bindings)


_LIBRARY_IMPORT = re.compile(
    r"[ \t]*(?:from[ \t]+|import[ \t]+)(?:jax|jaxlib|absl|pytest|functools|dataclasses|typing|typing_extensions"
    r"|enum|abc|unittest|contextlib|numpy|chex|flax|parameterized)\b")


def _container_members(block: Block) -> frozenset[str]:
    """The names the class body binds to what may be a container or an object: a literal
    holding brackets (`opts = {...}`, `[...]`), a container's constructor (`dict(...)`,
    `field(default_factory=list)`), a call of the module's own or of a project's function or
    class (`cache = make()`); not a name, an attribute of one, a number, a string, or what a
    library's function makes (`jnp.dtype("float16")`)."""
    found: set[str] = set()
    for member in block.members:
        if member.kind == "def" or member.kind == "class":
            continue
        value = _MEMBER_VALUE.match(code_of(member.text).strip())
        if value is None or _may_be_a_container(block, value.group(1)):
            found |= member.bound_names
    return frozenset(found)


def _may_be_a_container(block: Block, value: str) -> bool:
    if "[" in value or "{" in value or _CONTAINER_CALL.match(value):
        return True
    called = _CALLED.match(value)  # a builtin's (`tuple(...)`, `frozenset(...)`): not bound here
    return called is not None and called.group(1) in block.source.bindings and _from_the_project(
        block, called.group(1))


_MEMBER_VALUE = re.compile(r"\w+[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*(.*)\Z", re.DOTALL)
_CONTAINER_CALL = re.compile(
    r"(?:\w+[ \t]*\.[ \t]*)*(?:dict|list|set|defaultdict|OrderedDict|Counter|deque|bytearray|SimpleNamespace)[ \t]*\("
    r"|(?:\w+[ \t]*\.[ \t]*)?field[ \t]*\([^)]*default_factory")
_CALLED = re.compile(r"(\w+)(?:[ \t]*\.[ \t]*\w+)*[ \t]*\(")


def _class_members(cls: ClassVal, containers: bool = False) -> frozenset[str]:
    """The names the class body (or a base's of the module) binds but by `def` or `class`;
    with `containers`, those bound to what may be a container or an object."""
    found: set[str] = set()
    for c in _lineage(cls).classes:
        if c.block is not None:
            facts = _facts(c.block)
            found |= facts.how.attributes or frozenset() if containers else facts.members
    return frozenset(found)


def _class_reached(source: SourceFile, name: str, program: Program | None) -> bool:
    """Whether the module (or a file importing it) reaches the class of its global `name`
    through the object: `type(CFG)`, `CFG.__class__`."""
    reads.uses((name, "type", "__class__"))
    found = _CLASS_REACHED.setdefault(source, {})
    if name not in found:
        found[name] = bool(re.search(r"(?<![\w.])type[ \t]*\([ \t]*" + re.escape(name) + r"[ \t]*\)|(?<![\w.])"
                                     + re.escape(name) + r"[ \t]*\.[ \t]*__class__\b", _code(source)))
    return found[name] or (program is not None and (
        program.mentioned_by_importers(source, "__class__") or program.mentioned_by_importers(source, f"type({name})")))


_CLASS_REACHED: weakref.WeakKeyDictionary[SourceFile, dict[str, bool]] = weakref.WeakKeyDictionary()


def _code(source: SourceFile) -> str:
    """The module's code (`code_of`: comments and plain strings blanked), once a module."""
    found = _CODE.get(source)
    if found is None:
        found = _CODE[source] = code_of(source.text)
    return found


_CODE: weakref.WeakKeyDictionary[SourceFile, str] = weakref.WeakKeyDictionary()


def handed_on(source: SourceFile, name: str, how: Handing, program: Program | None = None) -> bool:
    """Whether the module's code hands the object of its global `name` to other code (or a
    container in it), outside its imports, or may reach its globals by a string. An object or
    a class held in a table of the module that its code only reads (`KERNELS = [A, B]` to a
    sweep) is handed on where a file of the tree importing it hands the table on or changes it."""
    reads.mutation_scan()
    found = _HANDED_ON.setdefault(source, {})
    key = (name, how)
    if key not in found:
        consulted: set[str] = set()
        held: list[tuple[str, Handing]] = []
        fixed = _by_name(source) or _kept_by_a_call(source, name)
        answer = fixed or passed_on(source.text, name, how, consulted=consulted, held_in=held)
        found[key] = (fixed, answer, frozenset(consulted | _BY_NAME_WORDS | {name}), tuple(held))
    fixed, answer, names, tables = found[key]
    reads.uses(names)
    if answer and not fixed and program is not None:
        # Handed to a function another module of the tree defines (`run(cfg)` of `from ops
        # import run`): followed there (the answer then depends on that module's text too).
        answer, tables = program.handed_on_through_functions(source, name, how)
    return answer or (program is not None and program.tables_handed_on(source, tables))


_HANDED_ON: weakref.WeakKeyDictionary[
    SourceFile, dict[tuple[str, Handing], tuple[bool, bool, frozenset[str], tuple[tuple[str, Handing], ...]]]
] = weakref.WeakKeyDictionary()


def _by_name(source: SourceFile) -> bool:
    """Whether the module's code may reach its globals by a string (`globals()["T"]`, `vars()`,
    `sys.modules[__name__].T`, `exec`): any object of them may be changed there."""
    found = _REACHED_BY_NAME.get(source)
    if found is None:
        code = _code(source)
        found = _REACHED_BY_NAME[source] = bool(BY_NAME.search(code) or any(
            not _MEMBERSHIP_OF.search(code, max(0, m.start() - 12), m.start()) for m in _SYS_MODULES.finditer(code)))
    return found


# Code that names a global by a string, or runs text as code.
BY_NAME = re.compile(r"(?<![\w.])(?:globals|vars|locals|exec|eval|__import__)[ \t]*\(|\bimport_module[ \t]*\(")
_BY_NAME_WORDS = frozenset({"globals", "vars", "locals", "exec", "eval", "__import__", "import_module", "modules"})
_SYS_MODULES = re.compile(r"(?<![\w.])sys[ \t]*\.[ \t]*modules\b")
_MEMBERSHIP_OF = re.compile(r"(?<![\w.])in[ \t]+\Z")  # `"pytest" in sys.modules`: a test, not a module's globals
_REACHED_BY_NAME: weakref.WeakKeyDictionary[SourceFile, bool] = weakref.WeakKeyDictionary()


def _kept_by_a_call(source: SourceFile, name: str) -> bool:
    """Whether the global is bound to what a function of the module returned, where that
    function changes a global of the module (`CFG = register("k", Cfg())`: `_REGISTRY[k] =
    cfg` keeps the object, which `get(k)` hands out) or is cached (one object, every call)."""
    for binding in source.bindings.get(name, ()):
        if binding.parent is not None or binding.kind != "stmt":
            continue
        called = _BOUND_TO_A_CALL.match(binding.first_line)
        if called is None or called.group(1) != name:
            continue
        for block in source.bindings.get(called.group(2), ()):
            if block.kind == "stmt" and (partial := _PARTIAL_OF_A_NAME.match(block.first_line)) is not None:
                # `make = functools.partial(Cfg, acc=None)`: what calling it calls, once more
                block = next(iter(source.bindings.get(partial.group(1), ())), block)
            if block.kind == "class" or block.first_line.lstrip().startswith(("import ", "from ")):
                continue  # a class's own call makes the object (`__init__` is `_hands_self`'s)
            if block.kind != "def":
                return True  # `get = functools.cache(make)`, a closure's function: not read here
            text = "".join(source.lines[block.start_line - 1 : block.end_line])
            mutated, stored = mutation_words(text)
            if block.first_line.lstrip().startswith("@") or (names_in(mutated) | stored) & source.bindings.keys():
                return True
    return False


_BOUND_TO_A_CALL = re.compile(r"[ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*(\w+)[ \t]*\(")
_PARTIAL_OF_A_NAME = re.compile(
    r"[ \t]*\w+[ \t]*(?::[^=\n]*)?=[ \t]*(?:functools[ \t]*\.[ \t]*)?partial[ \t]*\([ \t]*(\w+)[ \t]*[,)]")


class _Lineage(NamedTuple):
    """A class and its bases of the module, depth first (within `_MAX_BASES`)."""

    classes: tuple[ClassVal, ...]
    closed: bool  # every base is of the module or `object`, within `_MAX_BASES`


def _lineage(cls: ClassVal) -> _Lineage:
    classes: list[ClassVal] = []
    closed = True
    pending = [(cls, 0)]
    while pending:
        current, depth = pending.pop()
        if depth > _MAX_BASES:
            closed = False
            continue
        classes.append(current)
        for base in reversed(current.bases):
            if isinstance(base, ClassVal):
                pending.append((base, depth + 1))
            elif not (isinstance(base, Api) and base.name in ("object", "builtins.object")):
                closed = False
    return _Lineage(tuple(classes), closed)


def _only_methods(cls: ClassVal) -> bool:
    """Whether the class (and each base, of the module) binds nothing but functions: an object
    of it with no attribute of its own has no value a change could replace."""
    lineage = _lineage(cls)
    return lineage.closed and all(
        (name.startswith("__") and name.endswith("__"))
        or (isinstance(entry, Block) and entry.kind == "def") or isinstance(entry, Func)
        for c in lineage.classes for name, entry in c.attrs.items())


def _frozen(cls: ClassVal) -> bool:
    """Whether the class is a frozen dataclass (`@dataclasses.dataclass(frozen=True)`) or a
    `typing.NamedTuple`: its objects' attributes cannot be set (a dataclass's by
    `object.__setattr__` aside; a named tuple's fields have no setter at all)."""
    if cls.block is None:
        return False
    head = []
    for row in cls.block.text.splitlines():
        if re.match(r"[ \t]*class\b", row):
            if _NAMED_TUPLE.match(row):
                return True
            break  # the decorators end at the class statement
        head.append(row)
    return bool(_FROZEN.search(code_of("\n".join(head))))


_FROZEN = re.compile(r"@[ \t]*[\w.]*dataclass[ \t]*\([^)]*\bfrozen[ \t]*=[ \t]*True[ \t\n]*[,)]")
_NAMED_TUPLE = re.compile(r"[ \t]*class[ \t]+\w+[ \t]*\([ \t]*(?:[\w.]+\.)?NamedTuple[ \t]*\)[ \t]*:")


def _methods_keep_attributes(cls: ClassVal) -> bool:
    """Whether no method of a class of the module (nor of its bases, all of the module's)
    sets an attribute of its object after `__init__` or hands `self` on: calling one leaves
    the object's attributes as they were."""
    lineage = _lineage(cls)
    return lineage.closed and all(c.block is not None and not _facts(c.block).changes_its_objects
                                  for c in lineage.classes)


def _changes_its_objects(code: str) -> bool:
    """Whether a method in the class's code (`code_of`) but the initializers sets an attribute
    of its first parameter (a class method's `cls.acc = ...` too) or hands it on (a class
    method's `cls(...)` makes an object: not its own); a cache it fills once aside."""
    if "__setattr__" in code or "__dict__" in code:
        return True  # `super().__setattr__(...)`, `self.__dict__[k] = v`
    text = _INITIALIZER.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), code)
    objects, classes = _first_parameters(text)
    objects |= {"self"}
    for this in objects | classes:  # not a static method's, nor a nested function's
        patterns = _patterns(this)
        text_of_this = patterns.parameter.sub(r"\g<1>" + " " * len(this), text)
        # `if self._fn is None:` / `self._fn = build()`: a cache the object fills once.
        text_of_this = patterns.fills_once.sub(lambda m: m.group("head") + " " * len(m.group("store")), text_of_this)
        handed = patterns.handed if this in objects else patterns.handed_whole  # `cls()` makes one
        if patterns.sets.search(text_of_this) or handed.search(text_of_this):
            return True
    return False


def copies_itself(cls: ClassVal) -> bool:
    """Whether the class (or a base) may make its own copies (`__copy__`, `__deepcopy__`,
    `__reduce__`): `copy.copy` of an object of it may give the object back."""
    lineage = _lineage(cls)
    return not lineage.closed or any(c.block is None or _COPIES.search(c.block.text) for c in lineage.classes)


_COPIES = re.compile(r"__(?:copy|deepcopy|reduce|reduce_ex|getstate)__")


def _hands_self(cls: ClassVal) -> bool:
    """Whether a method of the class, `__init__` too, hands its object to other code
    (`_ALL.append(self)`, under any name of the first parameter): an object of it may be
    reached under another name from the moment it is made."""
    return any(c.block is not None and _facts(c.block).hands_its_objects_on for c in _lineage(cls).classes)


def _hands_its_objects_on(code: str, objects: set[str]) -> bool:
    """`_hands_self` of one class's code (`code_of`), its methods' object parameters given."""
    for this in objects | {"self"}:
        patterns = _patterns(this)
        text = patterns.parameter.sub(r"\g<1>", code)
        if patterns.handed.search(patterns.sets_own.sub(" ", text)):
            return True
    return False


def _first_parameters(code: str) -> tuple[set[str], set[str]]:
    """The first parameters' names of the class's methods (at the class's own depth, not a
    function's nested in one): those given the object (not a class or static method's, nor
    `__new__`'s), and the class methods' (`cls`)."""
    methods = list(_METHOD.finditer(code))
    indent = min((len(m.group("indent")) for m in methods), default=0)
    own = [m for m in methods if len(m.group("indent")) == indent]
    return ({m.group("first") for m in own
             if m.group("name") not in _CLASS_METHODS and not _NOT_OF_THE_OBJECT.search(m.group("decorators"))},
            {m.group("first") for m in own
             if m.group("name") in _CLASS_METHODS or _CLASS_METHOD.search(m.group("decorators"))})


_METHOD = re.compile(
    r"^(?P<indent>[ \t]*)(?P<decorators>(?:@[^\n]*\n(?P=indent))*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*"
    r"\([ \t]*(?P<first>\w+)", re.MULTILINE)
_CLASS_METHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
_NOT_OF_THE_OBJECT = re.compile(r"@[ \t]*(?:\w+[ \t]*\.[ \t]*)*(?:classmethod|staticmethod)\b")
_CLASS_METHOD = re.compile(r"@[ \t]*(?:\w+[ \t]*\.[ \t]*)*classmethod\b")


class _Patterns(NamedTuple):
    """What a method does with its first parameter `this`, as text."""

    parameter: re.Pattern[str]  # `def f(this`: the parameter itself, after group 1
    sets: re.Pattern[str]  # `this.x = v`, `this.items.append(v)`, `setattr(this, ...)`, `del this`
    handed: re.Pattern[str]  # `this` itself, not an attribute of it: `_ALL.append(this)`, `return this`
    # (not as what `type(this)`, `isinstance(this, C)` only read)
    sets_own: re.Pattern[str]  # `object.__setattr__(this, ...`, `setattr(this`: hands it to nobody
    handed_whole: re.Pattern[str]  # `this` itself, neither an attribute of it nor called: `_ALL.append(cls)`
    fills_once: re.Pattern[str]  # `if this._fn is None:` then `this._fn = ...` (groups `head`, `store`)


# Builtins that read the object they are given and keep nothing of it: `type(self).__name__`,
# `isinstance(self, C)`, `id(self)` hand it to nobody.
_ONLY_READ_BY = "".join(rf"(?<!\b{f}\()" for f in ("type", "isinstance", "id", "repr", "str", "hash", "len"))


@functools.cache
def _patterns(this: str) -> _Patterns:
    word = re.escape(this)
    return _Patterns(
        re.compile(r"(def[ \t]+\w+[ \t]*\([ \t]*)" + word + r"\b"),
        re.compile(
            r"(?<![\w.])" + word + r"[ \t]*\.[ \t]*\w+(?:[ \t]*\[[^\]\n]*\])*(?:" + ASSIGN_OP + "|[ \t]*"
            + MUTATING_CALL + r")|(?<![\w.])(?:setattr|delattr|vars)\([ \t]*" + word + r"\b|(?<![\w.])" + word
            + r"[ \t]*\.[ \t]*__dict__|\bdel[ \t]+" + word + r"\b"),
        re.compile(_ONLY_READ_BY + r"(?<![\w.])" + word + r"\b(?![ \t]*\.)"),
        re.compile(r"(?:object|super\(\))[ \t]*\.[ \t]*__setattr__\([ \t]*(?:" + word + r"[ \t]*,)?|setattr\([ \t]*"
                   + word + r"\b"),
        re.compile(_ONLY_READ_BY + r"(?<![\w.])" + word + r"\b(?![ \t]*[.(])(?!\w)"),
        re.compile(r"(?P<head>^[ \t]*if[ \t]+(?:" + word + r"[ \t]*\.[ \t]*(?P<a>\w+)[ \t]+is[ \t]+None|not[ \t]+" + word
                   + r"[ \t]*\.[ \t]*(?P<b>\w+))[ \t]*:[ \t]*(?:\n[ \t]+)?)(?P<store>" + word
                   + r"[ \t]*\.[ \t]*(?:(?P=a)|(?P=b))[ \t]*=(?!=))", re.MULTILINE),
    )


def _method_names(cls: ClassVal) -> frozenset[str]:
    """The names the class (and its bases of the module) defines by `def`."""
    return frozenset(name for c in _lineage(cls).classes if c.block is not None for name in _facts(c.block).method_names)


_DEF_NAME = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
# A method that makes the object (`__init__`, `__post_init__`, `__new__`): its def row and
# every row indented below it.
_INITIALIZER = re.compile(
    r"^([ \t]*)(?:async[ \t]+)?def[ \t]+__(?:init|post_init|new)__\b.*(?:\n(?:\1[ \t]+.*|[ \t]*))*", re.MULTILINE
)


def holds_a_container(value: Value) -> bool:
    """Whether a table holds a list, dict or set among its items (not the table itself)."""
    return any(changes_in_place(item) or holds_a_container(item) for item in _items(value))


def _mutable(value: Value) -> bool:
    """A list, dict or set, an object of a class, or a table holding one."""
    return changes_in_place(value) or isinstance(value, Instance) or _nesting(value) > 0


def _nesting(value: Value) -> int:
    """How many subscripts deep a table holds what may change (a container, an object of a
    class): 0 where none of its items is or holds one (`[{k: v}]`: 1, its dict; `{k: ([v],)}`:
    2, the list in the tuple; `[Cfg()]`: 1, the object, whose attributes are not items).

    Every object counts but a frozen dataclass's holding nothing that changes; a call of a
    method of one that sets an attribute changes it (`item_calls_keep`), but for a cache the
    object fills once (`if self._fn is None: self._fn = build()`: `for h in HEADS.values():
    h(x)`, a kernel built once and kept on the object, hands none on)."""
    return max(
        (1 if isinstance(item, Instance) else 1 + _nesting(item) for item in _items(value)
         if _kept_object(item) or changes_in_place(item) or _nesting(item)),
        default=0,
    )


def _row_places(value: Value, nesting: int) -> frozenset[int] | None:
    """Where the rows of a table (`[(Cfg(), 64)]`: its items, one level above the innermost
    that may change) hold what may change (`{0}`); None where a row is not a list or tuple."""
    if nesting < 2:
        return None
    rows = _innermost(value, nesting - 1)
    if not all(isinstance(row, TupleVal) for row in rows):
        return None
    return frozenset(i for row in rows for i, item in enumerate(row.items)  # type: ignore[attr-defined]
                     if _kept_object(item) or changes_in_place(item) or _nesting(item))


def _kept_object(value: Value) -> bool:
    """An object of a class, which something may change: not a frozen dataclass's holding
    nothing that changes (`CONFIGS = {"int8": Cfg(...)}`)."""
    if not isinstance(value, Instance):
        return False
    return not _frozen(value.cls) or any(_mutable(v) for v in value.attrs.values())


def _innermost(value: Value, levels: int) -> list[Value]:
    """The items `levels` subscripts down (`T[i][j]` for 2)."""
    found = [value]
    for _ in range(levels):
        found = [item for v in found for item in _items(v)]
    return found


def _items(value: Value) -> list[Value]:
    """What a table holds: a dict's keys and values, a list's, tuple's or set's items."""
    if isinstance(value, MapVal):
        return [part for entry in value.items for part in entry]
    if isinstance(value, DictVal):
        return [v for _, v in value.items]
    if isinstance(value, TupleVal | SetVal):
        return list(value.items)
    return []
