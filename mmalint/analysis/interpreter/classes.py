"""Classes and objects of the checked module: class bodies, attribute lookup through bases and
metaclasses, instantiation (`__init__`, dataclass fields), attribute stores."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from mmalint.analysis import by_root
from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter.core import (
    GAVE_UP,
    Frame,
    Machine,
    walk_statements,
)
from mmalint.analysis.interpreter.handing import class_changed_elsewhere, copies_itself
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.source import Block, BlockParseError
from mmalint.analysis.values import (
    NAMEDTUPLE_FIELDS,
    UNKNOWN,
    Api,
    BoundMethod,
    ClassVal,
    Const,
    EnumMember,
    Func,
    Instance,
    Origin,
    TupleVal,
    Value,
)

_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})


def _a_member(name: str, value: Value) -> bool:
    """Whether a name an enum's body binds is a member: not a method, a descriptor or a
    `_sunder_`/`__dunder__` name."""
    return not (name.startswith("_") or isinstance(value, Func | ClassVal))


# A class's defs are read without their decorators (`define_class_block`): these decide how one is
# read through an object or the class. A property is its value (a bound method was always
# true); a class method gets the class, a static method nothing.
_KINDS = {"property": "property", "cached_property": "property", "functools.cached_property": "property",
          "classmethod": "classmethod", "staticmethod": "staticmethod"}


def method_kinds(func: Func) -> frozenset[str]:
    """Which of "property", "classmethod" and "staticmethod" a decorator of the def makes it."""
    node = func.node
    return decorator_kinds(node) if isinstance(node, cst.FunctionDef) else frozenset()


def decorator_kinds(node: cst.FunctionDef) -> frozenset[str]:
    """`method_kinds` of a def's node."""
    return frozenset(kind for d in node.decorators if (kind := _KINDS.get(_dotted(d.decorator) or "")) is not None)


def _members_binding(klass: ClassVal, name: str) -> Iterator[tuple[Block, list[cst.BaseStatement] | None]]:
    """The members of the class's own body that bind `name`, with their statements (None for
    one that does not parse)."""
    for member in klass.block.members if klass.block is not None else ():
        if name in member.bound_names:
            try:
                yield member, list(member.statements())
            except BlockParseError:
                yield member, None


def linearized(cls: ClassVal) -> tuple[Value, ...]:
    """The class's method resolution order (C3, as Python computes it), a base not of the
    checked code (`abc.ABC`, a library's class) in its place with no bases of its own;
    `builtins.object` left out. Where C3 finds no order (Python: TypeError), the bases breadth
    first."""
    found = _LINEARIZED.get(id(cls))
    if found is not None and found[0] is cls:
        return found[1]
    order = _c3(cls, 0)
    if len(_LINEARIZED) > 4096:
        _LINEARIZED.clear()
    _LINEARIZED[id(cls)] = (cls, order)
    return order


# By class id (the class kept with it, so the id is never another's): its order.
_LINEARIZED: dict[int, tuple[ClassVal, tuple[Value, ...]]] = {}


def _bases(cls: ClassVal) -> list[Value]:
    """A class's bases, `builtins.object` left out (every order ends there)."""
    return [b for b in cls.bases if not (isinstance(b, Api) and b.name == "builtins.object")]


def _c3(cls: Value, depth: int) -> tuple[Value, ...]:
    if not isinstance(cls, ClassVal) or depth > 64:
        return (cls,)
    bases = _bases(cls)
    sequences = [list(_c3(b, depth + 1)) for b in bases] + [list(bases)]
    order: list[Value] = [cls]
    while any(sequences):
        sequences = [s for s in sequences if s]
        head = next((s[0] for s in sequences if not any(s[0] in t[1:] for t in sequences)), None)
        if head is None:
            return _breadth_first(cls)
        order.append(head)
        sequences = [s[1:] if s[0] == head else s for s in sequences]
    return tuple(order)


def _breadth_first(cls: ClassVal) -> tuple[Value, ...]:
    order: list[Value] = []
    todo: list[Value] = [cls]
    while todo:
        klass = todo.pop(0)
        if klass in order:
            continue
        order.append(klass)
        if isinstance(klass, ClassVal):
            todo.extend(_bases(klass))
    return tuple(order)


class Classes(Machine):
    """Classes of the module and their objects."""

    def define_class_block(self, block: Block) -> None:
        stmts = block.statements()
        node = stmts[0] if stmts else None
        if not isinstance(node, cst.ClassDef):
            return
        module = self.module_of(block.source).frame
        cls = self.make_class(node, block, module)
        module.env[node.name.value] = cls
        attrs: dict[str, object] = cls.attrs
        for member in block.members:
            for member_name in member.bound_names:
                attrs.setdefault(member_name, member)

    def class_attr(self, cls: ClassVal, name: str) -> Value | None:
        """A class attribute, looked up through the bases defined in this module."""
        if self._traces:
            self._traces[-1].classes_read = True  # stores into classes (`_class_epoch`) change it
        for klass in self.mro(cls):
            found = self.own_attr(cls, klass, name)
            if found is not None:
                return found
        return None

    def own_attr(self, cls: ClassVal, klass: ClassVal, name: str) -> Value | None:
        """The attribute `name` of `klass` itself (one of `cls`'s classes), or None."""
        set_by_metaclass = self._metaclass_attrs(klass)
        if name in set_by_metaclass:
            return set_by_metaclass[name]
        attrs = klass.attrs
        if name not in attrs:
            return None
        entry = attrs[name]
        if isinstance(entry, Block):
            self.unrepeatable += 1  # run once, by whichever call reads it first
            attrs[name] = UNKNOWN  # guards recursion while the member runs
            value = self._class_member_value(klass, entry, name)
            attrs[name] = value
        else:
            assert isinstance(entry, Value)
            value = entry
        kind = self.enum_kind(klass)
        if kind is not None and _a_member(name, value):
            return EnumMember(klass, name, value, kind or None)  # (members cannot be set)
        if not isinstance(value, Func) and value.known and class_changed_elsewhere(cls, name, self.program):
            return UNKNOWN  # `type(cfg).acc = v`, `override(Cfg, acc=v)`: not ordered
        return value

    def enum_kind(self, cls: ClassVal) -> str | None:
        """Whether the class is an enum of the module (a base `enum.Enum`, `IntEnum`...):
        "str" or "int" for what its members mix in (they equal their raw values), "" for a
        plain enum; None for a class that is no enum."""
        if id(cls) not in self._enum_kinds:
            names = {b.name for c in self.mro(cls) for b in c.bases if isinstance(b, Api)}
            self._enum_kinds[id(cls)] = (
                None if not names & _ENUM_BASES else "str" if names & {"builtins.str", "enum.StrEnum"}
                else "int" if names & {"builtins.int", "enum.IntEnum", "enum.IntFlag"} else "")
        return self._enum_kinds[id(cls)]

    def enum_members(self, cls: ClassVal) -> list[EnumMember]:
        """The members of an enum class of the module, in their order (one `auto()` gives
        has an unknown value, and is a member all the same)."""
        members: list[EnumMember] = []
        for name in list(cls.attrs):
            found = self.class_attr(cls, name)
            if isinstance(found, EnumMember) and found.cls is cls:
                members.append(found)
        return members

    def _metaclass_attrs(self, cls: ClassVal) -> dict[str, Value]:
        """Attributes a metaclass of the module sets from class keywords.

        jax's Pallas tests declare `class PallasCallWGTest(PallasCallTest,
        lowering_semantics=plgpu.LoweringSemantics.Warpgroup)`, and the metaclass's `__new__`
        does `cls.LOWERING_SEMANTICS = lowering_semantics`: each class gets its own keyword's
        value, or the parameter's default.
        """
        cached = self._metaclass_cache.get(id(cls))
        if cached is not None:
            return cached
        self._metaclass_cache[id(cls)] = {}
        meta = self._metaclass(cls)
        result: dict[str, Value] = {}
        new = self.class_attr(meta, "__new__") if isinstance(meta, ClassVal) else None
        if isinstance(new, Func) and isinstance(new.node, cst.FunctionDef):
            by_root.read_statically(self, new.block)
            defaults = dict(new.defaults)
            keywords = dict(cls.keywords)
            params = {p.name.value for p in new.node.params.kwonly_params}
            for statement in walk_statements(new.node.body):
                if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
                    continue
                target, value = statement.targets[0].target, statement.value
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(value, cst.Name)
                    and value.value in params
                ):
                    result[target.attr.value] = keywords.get(value.value, defaults.get(value.value, UNKNOWN))
        self._metaclass_cache[id(cls)] = result
        return result

    def _metaclass(self, cls: ClassVal) -> Value | None:
        """The `metaclass=` of the class or of its nearest base of the module that names one."""
        for klass in self.mro(cls):
            meta = dict(klass.keywords).get("metaclass")
            if meta is not None:
                return meta
        return None

    def reads_its_own_way(self, cls: ClassVal) -> bool:
        """Whether the class (or a base of the module) defines `__getattribute__`: every
        attribute of its objects is what that method returns (`__getattr__`, asked only for
        what is not found, is not)."""
        found = self._own_getattribute.get(id(cls))
        if found is None:
            found = self._own_getattribute[id(cls)] = isinstance(self.class_attr(cls, "__getattribute__"), Func)
        return found

    def mro(self, cls: ClassVal) -> Iterator[ClassVal]:
        """The class and its bases of the checked code, in Python's method resolution order."""
        return (klass for klass in linearized(cls) if isinstance(klass, ClassVal))

    def _class_member_value(self, cls: ClassVal, member: Block, name: str) -> Value:
        try:
            stmts = member.statements()
        except BlockParseError:
            return UNKNOWN
        module = self.module_of(member.source).frame
        frame = Frame(self, module, frozenset(), member)
        frame.env["__class__"] = cls
        try:
            # Worked out once, by whichever root reads it first, for all (as module-level code);
            # what it reads is read by whoever reads the class.
            with self.lazy_code(member.parent):
                for stmt in stmts:
                    if isinstance(stmt, cst.FunctionDef):
                        frame.env[stmt.name.value] = self.make_function(stmt, member, module, cls)
                    else:
                        self.exec_block([stmt], frame, member)
        except Diverges:
            pass
        except GAVE_UP as exc:
            self._note_gave_up(exc)
            return UNKNOWN
        return frame.env.get(name, UNKNOWN)

    def make_class(self, node: cst.ClassDef, block: Block, frame: Frame) -> ClassVal:
        bases = tuple(self.eval(arg.value, frame, block) for arg in node.bases if arg.keyword is None)
        keywords = tuple(
            (arg.keyword.value, self.eval(arg.value, frame, block))
            for arg in (*node.bases, *node.keywords)
            if arg.keyword is not None
        )
        return ClassVal(node.name.value, block, bases, {}, keywords, origin=Origin(block, node))

    def store_attribute(self, owner: Value, attr: str | None, value: Value, node: cst.CSTNode | None = None) -> None:
        """`obj.attr = value`: objects of the module are mutable; class attributes are forgotten
        (they are read lazily, so the store's order relative to reads is unknown); stores into
        jax modules (monkeypatching) are ignored. A property's setter, where the class has one,
        is called instead (at `node`, the store)."""
        if isinstance(owner, Instance) and attr is not None and node is not None:
            setter = self._setter(owner.cls, attr)
            if setter is not None:
                self.call_function(setter, Args([owner, value], {}, [None, None], {}), node)
                return
        self.effects += 1
        if isinstance(owner, Instance | ClassVal):
            by_root.stored(self, owner.born if isinstance(owner, Instance) else None)
        if isinstance(owner, Instance):
            for trace in self._traces:
                trace.stored(owner)
            if attr is None:
                owner.attrs.clear()
                owner.attrs["__unknown__"] = UNKNOWN
            else:
                owner.attrs[attr] = UNKNOWN if self._uncertainty else value
        elif isinstance(owner, ClassVal):
            self._class_epoch += 1
            if attr is None:
                for key in list(owner.attrs):
                    owner.attrs[key] = UNKNOWN
            else:
                owner.attrs[attr] = UNKNOWN

    def _setter(self, cls: ClassVal, attr: str) -> Func | None:
        """The setter of the property `attr` the class has (`@acc.setter def acc(self, v)`, in
        the class body that defines the property), or None."""
        if not any(klass.block is not None and ".setter" in klass.block.text for klass in self.mro(cls)):
            return None  # (every attribute store asks: most classes have no setter at all)
        prop = self.class_attr(cls, attr)
        if not (isinstance(prop, Func) and "property" in method_kinds(prop) and isinstance(prop.owner, ClassVal)):
            return None
        klass = prop.owner
        for member, stmts in _members_binding(klass, attr):
            if stmts is None:
                return None
            if any(isinstance(stmt, cst.FunctionDef) and any(
                    _dotted(d.decorator) == f"{attr}.setter" for d in stmt.decorators) for stmt in stmts):
                found = self._class_member_value(klass, member, attr)
                return found if isinstance(found, Func) else None
        return None

    def instantiate(self, cls: ClassVal, args: Args, node: cst.CSTNode) -> Value:
        """`Cls(...)`: a new object, initialised by the module's `__init__` or dataclass fields;
        of an enum, the member whose value it is given (`Precision("int8")`)."""
        if self.enum_kind(cls) is not None:
            return self._enum_by_value(cls, args)
        meta = self._metaclass(cls)
        if isinstance(meta, ClassVal) and isinstance(self.class_attr(meta, "__call__"), Func):
            return UNKNOWN  # a metaclass's `__call__` makes the object (or not) its own way
        instance = Instance(cls)
        for trace in self._traces:
            trace.made.add(instance)
        init = self.class_attr(cls, "__init__")
        if isinstance(init, Func):
            bound = Args([instance, *args.positional], args.keywords, [None, *args.nodes],
                         args.keyword_nodes, args.complete)
            self.call_function(init, bound, node)
            return instance
        fields = self.dataclass_fields(cls)
        if fields is None:
            if args.positional or args.keywords:
                instance.attrs["__unknown__"] = UNKNOWN
            return instance
        positional = list(args.positional)
        made = NAMEDTUPLE_FIELDS in dict(cls.keywords)
        for name in fields:
            if positional:
                instance.attrs[name] = positional.pop(0)
            elif name in args.keywords:
                instance.attrs[name] = args.keywords[name]
            elif not args.complete:
                instance.attrs[name] = UNKNOWN
            elif made:
                # `collections.namedtuple`'s object holds its defaults (Python: TypeError where none)
                instance.attrs[name] = cls.attrs.get(name, UNKNOWN)
            elif (default := self._field_default(cls, name, node)) is not None:
                instance.attrs[name] = default
        post_init = self.class_attr(cls, "__post_init__")
        if isinstance(post_init, Func):
            # The `__init__` a dataclass makes ends by calling it (what it sets, `self._fn =
            # None`, decides the object's later branches).
            self.call_function(post_init, Args([instance], {}, [None], {}), node)
        return instance

    def _field_default(self, cls: ClassVal, name: str, node: cst.CSTNode) -> Value | None:
        """What a dataclass's `name: T = dataclasses.field(default_factory=f)` (or
        `field(default=v)`) gives an object made without it: `f()`, `v`; None for a field
        declared otherwise (its class attribute is the default)."""
        for klass in self.mro(cls):
            for member, stmts in _members_binding(klass, name):
                if stmts is None:
                    return UNKNOWN
                line = stmts[0] if len(stmts) == 1 else None
                stmt = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else line
                call = stmt.value if isinstance(stmt, cst.AnnAssign) else None
                if not (isinstance(call, cst.Call) and (_dotted(call.func) or "").rpartition(".")[2] == "field"):
                    return None
                given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
                expr = given.get("default_factory", given.get("default"))
                if expr is None:
                    return UNKNOWN  # `field(init=False)`, `field(kw_only=True)`: not read here
                frame = Frame(self, self.module_of(member.source).frame, frozenset(), member)
                value = self.eval(expr, frame, member)
                if "default_factory" in given:
                    return self.call_value(value, Args([], {}, [], {}), node, frame, member)
                return value
        return None

    def _enum_by_value(self, cls: ClassVal, args: Args) -> Value:
        if len(args.positional) != 1 or args.keywords or not args.complete:
            return UNKNOWN
        given = args.positional[0]
        if isinstance(given, EnumMember):
            return given if given.cls is cls else UNKNOWN
        if not isinstance(given, Const | TupleVal):
            return UNKNOWN
        for member in self.enum_members(cls):
            same = self.compare("Equal", member.value, given)
            if same is None:
                return UNKNOWN  # an `auto()` value, say: which member is not known
            if same:
                return member
        # None matches: the class's `_missing_(value)` may give one (an alias table), else
        # Python raises ValueError.
        missing = self.class_attr(cls, "_missing_")
        if isinstance(missing, Func) and missing.owner is cls and isinstance(missing.node, cst.FunctionDef):
            # A class method gets the class; a function of the class body (static or not) only
            # the value, as `cls._missing_(value)` calls it.
            bound = "classmethod" in decorator_kinds(missing.node)
            found = self.call_value(BoundMethod(missing, cls) if bound else missing, Args([given], {}, [None], {}),
                                    missing.node, self.module_of(missing.block.source).frame, missing.block)
            return found if isinstance(found, EnumMember) and found.cls is cls else UNKNOWN
        return UNKNOWN

    def enum_member_attribute(self, member: EnumMember, attr: str) -> Value | None:
        """What an enum's `__init__` sets on a member from its value (`FAST = ("bfloat16",
        "float32")` with `def __init__(self, operand, accumulator): self.operand = ...`), run
        once per member on a stand-in object holding its `value` and `name`; None where the
        class has no `__init__` of its own or it does not set `attr`."""
        init = self.class_attr(member.cls, "__init__")
        if not (isinstance(init, Func) and init.owner is member.cls):
            return None
        key = (id(member.cls), member.name)
        made = self._enum_inits.get(key)
        if made is None or made[0] is not member.cls:
            given = list(member.value.items) if isinstance(member.value, TupleVal) and not member.value.is_list else [member.value]
            name = Const(member.name)
            standin = Instance(member.cls, {"value": member.value, "_value_": member.value, "name": name, "_name_": name})
            self.unrepeatable += 1  # run once, by whichever call reads it first, for all (as import does)
            try:
                with self.lazy_code(member.cls.block):
                    self.call_function(init, Args([standin, *given], {}, [None] * (len(given) + 1), {}), init.node)
            except Diverges:
                standin.attrs.clear()
            made = self._enum_inits[key] = (member.cls, standin.attrs)
        return made[1].get(attr)

    def is_namedtuple(self, cls: ClassVal) -> bool:
        """Whether a class of the checked code is (or derives from) a `typing.NamedTuple`
        class: its objects have `_replace`."""
        for klass in self.mro(cls):
            if klass.block is None:
                continue
            try:
                stmts = klass.block.statements()
            except BlockParseError:
                return False
            node = stmts[0] if stmts else None
            if isinstance(node, cst.ClassDef) and _namedtuple_head(node):
                return True
        return False

    def copies_its_own_way(self, cls: ClassVal) -> bool:
        return copies_itself(cls)

    def dataclass_fields(self, cls: ClassVal) -> list[str] | None:
        """The `__init__` parameters of a `@dataclass` (its annotated fields, bases first), or
        of a `typing.NamedTuple` class."""
        made = dict(cls.keywords).get(NAMEDTUPLE_FIELDS)
        if cls.block is None and isinstance(made, TupleVal):
            return [f.value for f in made.items if isinstance(f, Const)]  # `collections.namedtuple`'s
        fields: list[str] = []
        for klass in reversed(list(self.mro(cls))):
            block = klass.block
            if block is None:
                return None
            try:
                stmts = block.statements()
            except BlockParseError:
                return None
            node = stmts[0] if stmts else None
            if not isinstance(node, cst.ClassDef):
                return None
            decorated = any(
                (_dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "")
                .endswith("dataclass")
                for d in node.decorators
            ) or _namedtuple_head(node)  # `class Spec(NamedTuple):` takes its annotated fields likewise
            if not decorated:
                if klass is cls:
                    return None
                continue
            members = [m.text for m in block.members] if block.members else [
                block.code(s) for s in (node.body.body if isinstance(node.body, cst.IndentedBlock) else [])
            ]
            for text in members:
                match = re.match(r"\s*(\w+)\s*:(?!=)\s*(?!ClassVar|typing\.ClassVar)", text)
                if match and not text.lstrip().startswith(("def ", "class ", "@")) and match.group(1) not in fields:
                    fields.append(match.group(1))
        return fields


def _namedtuple_head(node: cst.ClassDef) -> bool:
    """Whether a class statement names `NamedTuple` (`typing.NamedTuple`) among its bases."""
    return any((_dotted(base.value) or "").rpartition(".")[2] == "NamedTuple" for base in node.bases)
