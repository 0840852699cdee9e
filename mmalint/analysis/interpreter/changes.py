"""Containers changed in place: a statement that fills one the frame binds (`xs.append(x)`),
and every name, container and object attribute holding one that changed (`rebind`), since
values here are immutable and a read gives a copy."""

from __future__ import annotations

import re

import libcst as cst

from mmalint.analysis.host import Args
from mmalint.analysis.interpreter.core import Frame, Machine, all_params, augmented_binding
from mmalint.analysis.scopes import owns_its_container
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    CONTAINERS,
    UNKNOWN,
    Const,
    DictVal,
    Instance,
    MapVal,
    SetVal,
    TupleVal,
    Value,
    dict_entries,
)


class Changes(Machine):
    """`fill_in_place`, `rebind` and what a call changed (`forget_changed`)."""

    def fill_in_place(self, call: cst.Call, frame: Frame, block: Block) -> bool:
        """`l.append(x)`, `l.extend(xs)`, `d.update(m)` or `d.setdefault(k, v)` as a statement
        of its own, on a name this frame binds itself (not a parameter, whose default Python
        shares between calls, nor an enclosing function's), that runs for certain (not under a
        branch or a loop that may not run, in a `try` or `with` body, or under `if
        TYPE_CHECKING`): the container as Python leaves it. False where it is not that (the
        call runs as any call: a mutation forgets the container)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value in _FILLS):
            return False
        name = func.value.value
        receiver = frame.env.get(name)
        if (self._uncertainty or self._guarded or not isinstance(receiver, CONTAINERS)
                or (frame.function is not None and _is_parameter(frame.function, name))):
            return False
        args = self.eval_args(call, frame, block)
        self.rebind(receiver, _filled(self, receiver, func.attr.value, args), frame, name)
        return True

    def rebind(self, old: Value, new: Value, frame: Frame, through: str | None = None) -> None:
        """`kwargs.pop(k)` mutates; values are immutable, so every name holding it is rebound.
        Reading a name gives a copy that carries where it was read, so holders are matched by
        facts: two names holding equal containers (a copy, an alias, two equal literals) may be
        one object or two, and both are forgotten; so are containers holding it and a dict's
        views (`t.keys()`: live in Python). The caller of a function that changed a container
        it was given forgets it too (`call_value`), and an object the frame's names reach
        forgets an attribute holding it. Changed `through` a local name that owns its
        container (`opts = dict(options)`, `scopes.owns_its_container`), that name alone holds
        it (and its views)."""
        self.effects += 1
        self._rebound.append(old)
        views = dict_views(old)
        holders: list[tuple[Frame, str]] = []
        stale: list[tuple[Frame, str]] = []
        objects: dict[int, Instance] = {}
        scope: Frame | None = frame
        while scope is not None:
            for name, value in scope.env.items():
                if _same(value, old):
                    holders.append((scope, name))
                elif _inside(value, old, views):
                    stale.append((scope, name))
                if not scope.is_module:  # (a module's objects: its text scan's, `handing`)
                    _objects_in(value, objects, 2)
            scope = scope.parent
        # An object's attribute may hold it too (`o = cfg.opts; o[k] = v`): forgotten (the
        # store through the attribute itself sets it again: `Statements.assign`).
        attributes = [(obj, attr) for obj in objects.values() for attr, held in obj.attrs.items()
                      if _same(held, old) or _inside(held, old, views)]
        if ((len(holders) > 1 or stale or attributes) and through is not None and frame.env.get(through) == old
                and (owns_its_container(frame.function, through) if frame.function is not None
                     else _module_owns(frame, through))):
            holders, attributes = [(frame, through)], []  # the one name that holds it
            stale = [(scope, name) for scope, name in stale if scope.env[name] in views]
        for scope, name in holders:
            scope.env[name] = new if len(holders) == 1 else UNKNOWN
        for scope, name in stale:
            scope.env[name] = UNKNOWN
        for obj, attr in attributes:
            self.store_attribute(obj, attr, UNKNOWN)

    def forget_changed(self, args: Args, mark: int, frame: Frame) -> None:
        """After a call that changed containers (`rebind` since `mark`): the caller's names
        holding an argument it changed are forgotten (`def fix(t): t[k] = v`)."""
        changed = self._rebound[mark:]
        for value in [*args.positional, *args.keywords.values()]:
            if isinstance(value, CONTAINERS) and any(_same(c, value) for c in changed):
                self.rebind(value, UNKNOWN, frame)


def _module_owns(frame: Frame, name: str) -> bool:
    """Whether a store into the global `name` at a module's top level changes its container
    alone: top-level statements bind it, each to a new container (`T = {}`, `T = [...]`) or
    changing it in place (`T |= {...}`), and fill it, and no code passes it on (its settling
    chain, `core.settling_chain`). Two globals bound to equal literals (`A = {}`, `B = {}`)
    are two objects; `B = A` passes A on, `B = A = {}` binds neither to a display of its own."""
    module = frame.module
    if not frame.is_module or module is None or module.chain(name) is None:
        return False
    fresh = re.compile(r"[ \t]*" + re.escape(name) + r"[ \t]*(?::[^=\n]*)?=[ \t]*[\[{]")
    augmented = augmented_binding(name)
    return all(fresh.match(b.first_line) or augmented.match(b.first_line)
               for b in module.source.bindings.get(name, ()))


def _is_parameter(function: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    params = function.params
    return any(p.name.value == name for p in all_params(params)) or any(
        isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg))


# The methods `Changes.fill_in_place` follows.
_FILLS = frozenset({"append", "extend", "insert", "update", "setdefault"})


def _filled(calls: Machine, receiver: Value, name: str, args: Args) -> Value:
    """What a list's `append`/`extend`/`insert`, or a dict's `update` (from a known dict) or
    `setdefault`, leaves the container; UNKNOWN where that is not known."""
    if not args.complete:
        return UNKNOWN
    plain = args.positional
    if (name == "insert" and isinstance(receiver, TupleVal) and receiver.is_list and not args.keywords
            and len(plain) == 2 and isinstance(plain[0], Const) and type(plain[0].value) is int):
        listed = list(receiver.items)
        listed.insert(plain[0].value, plain[1])  # Python's own rule for an index past either end
        return TupleVal(tuple(listed), True)
    if isinstance(receiver, TupleVal) and receiver.is_list and not args.keywords and len(plain) == 1:
        if name == "append":
            return TupleVal((*receiver.items, plain[0]), True)
        items = calls.iterate(plain[0]) if name == "extend" else None
        return TupleVal((*receiver.items, *items), True) if items is not None else UNKNOWN
    if not isinstance(receiver, DictVal | MapVal):
        return UNKNOWN
    if name == "update" and len(plain) <= 1:
        given = plain[0] if plain else DictVal(())
        if not isinstance(given, DictVal | MapVal):
            return UNKNOWN
        return calls.mapping([*dict_entries(receiver), *dict_entries(given),
                              *((Const(k), v) for k, v in args.keywords.items())])
    if name == "setdefault" and len(plain) == 2 and not args.keywords:
        found: bool | None = None
        if isinstance(receiver, MapVal):
            found = calls.entry(receiver, plain[0])[0]
        elif isinstance(plain[0], Const) and isinstance(plain[0].value, str):
            found = receiver.get(plain[0].value) is not None
        elif not receiver.items:
            found = False
        if found is True:
            return receiver
        if found is False:
            return calls.mapping([*dict_entries(receiver), (plain[0], plain[1])])
    return UNKNOWN


# A dict's methods that give a view of it, in the order `dict_views` gives them.
VIEWS = ("keys", "values", "items")


def dict_views(old: Value) -> tuple[Value, ...]:
    """A dict's keys, values and items as `.keys()`, `.values()`, `.items()` give them."""
    if not isinstance(old, DictVal | MapVal):
        return ()
    entries = dict_entries(old)
    return (SetVal(tuple(k for k, _ in entries), ordered=True), TupleVal(tuple(v for _, v in entries), True),
            TupleVal(tuple(TupleVal(entry) for entry in entries), True))


def _objects_in(value: Value, found: dict[int, Instance], depth: int) -> None:
    """The objects a value is or holds, and those their attributes hold, `depth` levels down."""
    if depth < 0:
        return
    if isinstance(value, Instance):
        if id(value) not in found:
            found[id(value)] = value
            for held in list(value.attrs.values()):
                _objects_in(held, found, depth - 1)
    elif isinstance(value, DictVal):
        for _, item in value.items:
            _objects_in(item, found, depth - 1)
    elif isinstance(value, TupleVal | SetVal):
        for item in value.items:
            _objects_in(item, found, depth - 1)


def _holds(value: Value, old: Value, depth: int) -> bool:
    """Whether a container holds `old` (by facts), `depth` levels down at most."""
    if depth == 0:
        return False
    if isinstance(value, DictVal):
        inner: tuple[Value, ...] = tuple(v for _, v in value.items)
    elif isinstance(value, MapVal):
        inner = tuple(part for entry in value.items for part in entry)
    elif isinstance(value, TupleVal | SetVal):
        inner = value.items
    else:
        return False
    return any((type(v) is type(old) and v == old) or _holds(v, old, depth - 1) for v in inner)


def _same(value: Value, old: Value) -> bool:
    """Whether a name or attribute holds `old` itself, by facts: a copy read from it, an alias
    or an equal literal may be the same object."""
    return value is old or (type(value) is type(old) and value == old)


def _inside(value: Value, old: Value, views: tuple[Value, ...]) -> bool:
    """Whether a container a name or attribute holds is a view of `old` or holds it (by
    facts, two levels down)."""
    return isinstance(value, CONTAINERS) and (value in views or _holds(value, old, 2))
