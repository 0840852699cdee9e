"""The standard library the checked code builds its parameters with: functools, itertools,
math, typing, contextlib."""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from mmalint.analysis import bounds
from mmalint.analysis.host import (
    REGISTRY,
    Args,
    Bound,
    Call,
    Host,
    callable_kind,
    model,
    resolver,
    subscript,
)
from mmalint.analysis.values import (
    FALSE,
    NAMEDTUPLE_FIELDS,
    NONE,
    UNKNOWN,
    Api,
    ClassVal,
    Const,
    ContextFactory,
    DictVal,
    Func,
    GeneratorContext,
    Getter,
    Instance,
    LiteralType,
    MapVal,
    Partial,
    SetVal,
    TupleVal,
    Value,
    as_int,
)

if TYPE_CHECKING:
    from mmalint.analysis.source import Block


@model("functools.partial", signature="(func, *args, **keywords)")
def _partial(host: Host, args: Bound, call: Call) -> Value:
    if not args.positional:
        return UNKNOWN
    func = args.positional[0]
    special = REGISTRY.partials.get(func.name) if isinstance(func, Api) else REGISTRY.partial_kinds.get(type(func))
    if special is not None:
        found = special(func, args.raw)
        if found is not None:
            return found
    if not args.complete:
        return UNKNOWN
    return Partial(func, tuple(args.positional[1:]), tuple(args.keywords.items()))


@model("functools.cache", signature="(user_function)")
def _cache(host: Host, args: Bound, call: Call) -> Value:
    return args["user_function"]


@model("functools.lru_cache", signature="(*args, **kwargs)")
def _lru_cache(host: Host, args: Bound, call: Call) -> Value:
    first = args.positional[0] if args.positional else None
    if first is not None and (isinstance(first, Func | Partial) or REGISTRY.callables.get(type(first))):
        return first  # `@functools.lru_cache` on a function (or a kernel)
    return Api("builtins.identity_decorator")  # `@functools.lru_cache(maxsize=None)`


@model("functools.wraps", signature="(wrapped, ...)")
def _wraps(host: Host, args: Bound, call: Call) -> Value:
    return Api("builtins.identity_decorator")


@model("contextlib.contextmanager", signature="(func)")
def _contextmanager(host: Host, args: Bound, call: Call) -> Value:
    """A function's generator as a context manager; a method's is not bound here: unknown, as
    a call of code no model knows."""
    func = args["func"]
    if isinstance(func, Func) and func.owner is None:
        return ContextFactory(func)
    host.note_escaped([func])
    return UNKNOWN


@callable_kind(ContextFactory)
def _enter(host: Host, value: Value, raw: Args, call: Call) -> Value:
    """`with scope(dtype) as s:`: the generator runs (up to its end: what follows its yield runs
    here, before the `with` body), and `s` is what it yields, where it yields once for sure."""
    assert isinstance(value, ContextFactory) and isinstance(value.func, Func)
    with host.with_context(entering=value.func.node):
        made = host.call_value(value.func, raw, call.node, call.frame, call.block)
    return GeneratorContext(made.items[0] if isinstance(made, TupleVal) and len(made.items) == 1 else UNKNOWN)


@model("collections.namedtuple", signature="(typename, field_names, *, rename=False, defaults=None, module=None)")
def _namedtuple(host: Host, args: Bound, call: Call) -> Value:
    """A class whose objects hold the fields given them, the last ones defaulting to
    `defaults`: made as a dataclass's are (its fields as `__init__`'s parameters)."""
    name, given, defaults = args["typename"], args["field_names"], args["defaults"]
    names = (given.value.replace(",", " ").split() if isinstance(given, Const) and isinstance(given.value, str)
             else [f.value for f in given.items if isinstance(f, Const) and isinstance(f.value, str)]
             if isinstance(given, TupleVal) and all(isinstance(f, Const) for f in given.items) else None)
    tail = [] if defaults == NONE else list(defaults.items) if isinstance(defaults, TupleVal) else None
    if (not isinstance(name, Const) or not isinstance(name.value, str) or names is None or tail is None
            or len(tail) > len(names) or not names or args["rename"] != FALSE or not all(n.isidentifier() for n in names)):
        return UNKNOWN
    attrs: dict[str, Value] = dict(zip(names[len(names) - len(tail):], tail, strict=True))
    return ClassVal(name.value, None, (), attrs, ((NAMEDTUPLE_FIELDS, TupleVal(tuple(Const(n) for n in names))),))


@model("operator.attrgetter", signature="(attr)")
def _attrgetter(host: Host, args: Bound, call: Call) -> Value:
    """One dotted attribute path (several, giving a tuple: not read here)."""
    given = args["attr"]
    if len(args.positional) != 1 or not (isinstance(given, Const) and isinstance(given.value, str)):
        return UNKNOWN
    parts = given.value.split(".")
    return Getter(tuple(Const(p) for p in parts), True) if all(p.isidentifier() for p in parts) else UNKNOWN


@model("operator.itemgetter", signature="(item)")
def _itemgetter(host: Host, args: Bound, call: Call) -> Value:
    return Getter((args["item"],), False) if len(args.positional) == 1 else UNKNOWN


@callable_kind(Getter)
def _get(host: Host, value: Value, raw: Args, call: Call) -> Value:
    assert isinstance(value, Getter)
    if len(raw.positional) != 1 or raw.keywords or not raw.complete:
        return UNKNOWN
    found = raw.positional[0]
    for part in value.path:
        if value.attribute:
            assert isinstance(part, Const)
            found = host.getattr(found, part.value, call.node)
        else:
            found = host.subscript(found, part, call.node, call.block)
    return found


@model("json.loads", signature="(s, **kwargs)")
def _json_loads(host: Host, args: Bound, call: Call) -> Value:
    """`json.loads` of a constant string (a config table exported into the module as text)."""
    return _parsed(args, json.loads)


@model("tomllib.loads", signature="(s, **kwargs)")
def _toml_loads(host: Host, args: Bound, call: Call) -> Value:
    return _parsed(args, tomllib.loads)


# The longest text parsed, and the most values kept of it: past them, unknown.
MAX_PARSED_TEXT = 100_000
MAX_PARSED_VALUES = 4096


def _parsed(args: Bound, parse: Callable[[str], object]) -> Value:
    text = args["s"]
    if args.keywords or not (isinstance(text, Const) and isinstance(text.value, str)) or len(text.value) > MAX_PARSED_TEXT:
        return UNKNOWN
    try:
        data = parse(text.value)
    except (ValueError, RecursionError):
        return UNKNOWN  # Python raises: nothing past it runs as written
    budget = [MAX_PARSED_VALUES]
    return _as_value(data, budget)


def _as_value(data: object, budget: list[int]) -> Value:
    """A parsed document as values: objects as dicts of string keys, arrays as lists, numbers,
    strings, booleans and null as constants; anything else (a TOML date), or past the budget,
    unknown."""
    budget[0] -= 1
    if budget[0] < 0:
        return UNKNOWN
    if data is None or isinstance(data, bool | int | float | str):
        return Const(data)
    if isinstance(data, list):
        return TupleVal(tuple(_as_value(item, budget) for item in data), is_list=True)
    if isinstance(data, dict) and all(isinstance(key, str) for key in data):
        return DictVal(tuple((key, _as_value(value, budget)) for key, value in data.items()))
    return UNKNOWN


@model("copy.deepcopy", signature="(x, ...)")
def _deepcopy(host: Host, args: Bound, call: Call) -> Value:
    """`copy.deepcopy(TEMPLATE)`: an object of a class of the checked code that is copied no
    way of its own, as a new object of its class holding deep copies of its attributes (a
    container or a plain value is a value here: its own copy); unknown past a few objects
    deep, or where one object is held twice (the copies would share it)."""
    if len(args.positional) != 1 or args.keywords:
        return UNKNOWN
    return _deep_copy(host, args.positional[0], set(), 0)


def _deep_copy(host: Host, value: Value, seen: set[int], depth: int) -> Value:
    if isinstance(value, Instance):
        if id(value) in seen or depth > 4 or "__unknown__" in value.attrs or host.copies_its_own_way(value.cls):
            return UNKNOWN
        seen.add(id(value))
        return Instance(value.cls, {name: _deep_copy(host, item, seen, depth + 1) for name, item in value.attrs.items()})
    if isinstance(value, TupleVal):
        return TupleVal(tuple(_deep_copy(host, item, seen, depth + 1) for item in value.items), value.is_list)
    if isinstance(value, DictVal):
        return DictVal(tuple((key, _deep_copy(host, item, seen, depth + 1)) for key, item in value.items))
    if isinstance(value, SetVal | MapVal):
        return value if not _holds_objects(value) else UNKNOWN
    return value


def _holds_objects(value: Value) -> bool:
    return isinstance(value, Instance) or (isinstance(value, SetVal | MapVal | TupleVal) and any(
        _holds_objects(part) for item in value.items for part in (item if isinstance(item, tuple) else (item,))))


@model("dataclasses.replace", signature="(*args, **changes)")
def _replace(host: Host, args: Bound, call: Call) -> Value:
    """`dataclasses.replace(obj, **changes)`: what a model of the object's kind makes of it
    (its `__replace__`, as `copy.replace` asks since Python 3.13), else for an object of a
    dataclass of the checked code as Python makes it: a new object of the class from the fields
    of `obj` and the changes (`type(obj)(**fields)`: its `__init__` runs)."""
    obj = args.positional[0] if len(args.positional) == 1 else UNKNOWN
    special = REGISTRY.method_for(type(obj), "__replace__")
    if special is not None:
        changes = Args([], dict(args.keywords), [], dict(args.keyword_nodes), args.complete)
        return special(host, obj, changes, call)
    if not args.complete or not isinstance(obj, Instance) or "__unknown__" in obj.attrs:
        return UNKNOWN
    fields = host.dataclass_fields(obj.cls)
    if fields is None or not set(args.keywords) <= set(fields):
        return UNKNOWN  # not a dataclass, or a change of no field (Python: TypeError)
    kept = {name: obj.attrs[name] for name in fields if name in obj.attrs and name not in args.keywords}
    # A field `obj` does not hold reads the class's default, in the new object too.
    return host.call_value(obj.cls, Args([], {**kept, **args.keywords}, [], {}), call.node, call.frame, call.block)


@model("itertools.chain", signature="(*iterables)")
def _chain(host: Host, args: Bound, call: Call) -> Value:
    """`itertools.chain(A, (f(x) for x in B))`: each iterable's items in turn (as a list: an
    iterator read once here)."""
    items: list[Value] = []
    for iterable in args.positional if args.complete else ():
        found = host.iterate(iterable)
        if found is None:
            return UNKNOWN
        items.extend(found)
    if not args.complete or len(items) > 256:
        return UNKNOWN
    return TupleVal(tuple(items), True)


@model("itertools.product", signature="(*iterables, **kwargs)")
def _product(host: Host, args: Bound, call: Call) -> Value:
    """`itertools.product(A, B)`, and `product(A, repeat=2)` (A with itself)."""
    repeat = as_int(args.keywords["repeat"]) if set(args.keywords) == {"repeat"} else None if args.keywords else 1
    if repeat is None or not 0 <= repeat <= 8 or not args.complete:
        return UNKNOWN
    pools = [host.iterate(v) for v in args.positional] * repeat
    if any(p is None for p in pools):
        return UNKNOWN
    combos: list[tuple[Value, ...]] = [()]
    for pool in pools:
        assert pool is not None
        combos = [(*c, item) for c in combos for item in pool]
        if len(combos) > 256:
            return UNKNOWN
    return TupleVal(tuple(TupleVal(c) for c in combos))


def _math(fn: Callable[..., object]) -> Callable[[Host, Bound, Call], Value]:
    def compute(host: Host, args: Bound, call: Call) -> Value:
        values = args.positional
        if len(values) == 1 and isinstance(values[0], TupleVal):
            values = list(values[0].items)
        ints = [as_int(v) for v in values]
        if any(i is None for i in ints):
            return UNKNOWN
        if not bounds.affordable_ints([i for i in ints if i is not None]):
            return UNKNOWN
        try:
            return Const(fn(*ints))
        except Exception:
            return UNKNOWN

    return compute


_MAX_FOLDED = 64  # items `functools.reduce` folds (as many as a loop unrolls)


@model("functools.reduce", signature="(function, iterable, *args)")
def _fold(host: Host, args: Bound, call: Call) -> Value:
    """`functools.reduce(math.gcd, widths)`: the function called on the running value and each
    item in turn, from the initial value given or the first item."""
    items = host.iterate(args["iterable"])
    extra = list(args.positional[2:])
    if items is None or len(items) > _MAX_FOLDED or len(extra) > 1 or args.keywords:
        return UNKNOWN
    items = extra + items
    if not items:
        return UNKNOWN  # `TypeError: reduce() of empty iterable with no initial value`
    value = items[0]
    for item in items[1:]:
        value = host.call_value(args["function"], Args([value, item], {}, [None, None], {}, True), call.node,
                                call.frame, call.block)
    return value


model("math.prod", signature="(*args, **kwargs)")(_math(lambda *xs: math.prod(xs)))
model("math.ceil", signature="(*args, **kwargs)")(_math(math.ceil))
model("math.gcd", signature="(*args, **kwargs)")(_math(math.gcd))
model("math.lcm", signature="(*args, **kwargs)")(_math(math.lcm))


@subscript(Api)
def _literal(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    """`Literal["bf16", "s8"]` of constants (a tuple of kinds a test sweeps with `get_args`)."""
    if not (isinstance(value, Api) and value.name in _LITERALS):
        return UNKNOWN
    items = index.items if isinstance(index, TupleVal) and not index.is_list else (index,)
    return LiteralType(tuple(items)) if all(isinstance(v, Const) for v in items) else UNKNOWN


_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})


@model("typing.get_args", "typing_extensions.get_args", signature="(tp)")
def _get_args(host: Host, args: Bound, call: Call) -> Value:
    given = args["tp"]
    return TupleVal(given.values) if isinstance(given, LiteralType) else UNKNOWN


REGISTRY.both_ways.add("typing.TYPE_CHECKING")


@resolver("typing.TYPE_CHECKING")
@resolver("TYPE_CHECKING")
def _type_checking(name: str) -> Value | None:
    # Both branches of `if TYPE_CHECKING:` run (see the interpreter's `if`).
    return Api("typing.TYPE_CHECKING") if name in ("typing.TYPE_CHECKING", "TYPE_CHECKING") else None
