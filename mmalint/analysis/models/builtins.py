"""Python's builtins, as far as kernels and their tests use them to build facts.

`range`, `len`, `zip`, `sorted`... over known values give known values; the three decorators
`call_blind_decorator`, `never_decorator` and `identity_decorator` are what other models return
for decorators that run their function with unknown arguments, never, or unchanged.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

import libcst as cst

from mmalint.analysis.host import (
    REGISTRY,
    Args,
    Bound,
    Call,
    Diverges,
    Host,
    attribute,
    method,
    model,
)
from mmalint.analysis.values import (
    FALSE,
    NONE,
    TRUE,
    UNKNOWN,
    Api,
    ClassVal,
    Const,
    DictVal,
    DType,
    EnumMember,
    Func,
    Instance,
    MapVal,
    Method,
    SetVal,
    SuperOf,
    TupleVal,
    Value,
    as_int,
    changes_in_place,
    dict_entries,
)

BUILTIN_NAMES = frozenset(
    {
        "range", "len", "isinstance", "tuple", "list", "dict", "int", "float", "bool", "str",
        "min", "max", "sum", "abs", "getattr", "enumerate", "zip", "print", "staticmethod",
        "classmethod", "property", "super", "type", "object", "set", "frozenset", "sorted",
        "reversed", "map", "filter", "any", "all", "hasattr", "setattr", "iter", "next", "slice",
        "call_blind_decorator", "never_decorator", "identity_decorator", "ValueError",
        "TypeError", "NotImplementedError", "RuntimeError", "Exception",
    }
)
REGISTRY.builtin_names.update(BUILTIN_NAMES)


@model("builtins.range", signature="(*args)")
def _range(host: Host, args: Bound, call: Call) -> Value:
    ints = [as_int(v) for v in args.positional]
    if not ints or any(i is None for i in ints) or args.keywords:
        return UNKNOWN
    r = range(*ints)  # type: ignore[arg-type]
    if len(r) > 256:
        return UNKNOWN
    return TupleVal(tuple(Const(i) for i in r))


@model("builtins.slice", signature="(*args)")
def _slice(host: Host, args: Bound, call: Call) -> Value:
    values = list(args.positional)
    if len(values) == 1:
        values = [NONE, values[0], NONE]
    while len(values) < 3:
        values.append(NONE)
    return TupleVal((Const("slice"), *values[:3]))


@model("builtins.len", signature="(obj)")
def _len(host: Host, args: Bound, call: Call) -> Value:
    v = args["obj"]
    if isinstance(v, TupleVal | DictVal | MapVal) or (isinstance(v, SetVal) and v.ordered):
        return Const(len(v.items))
    if isinstance(v, SetVal):
        distinct = host.members(v)  # its items less those equal to another (`{a, b}` of a == b)
        return Const(len(distinct)) if distinct is not None else UNKNOWN
    if isinstance(v, Const) and isinstance(v.value, str):
        return Const(len(v.value))
    return UNKNOWN


@model("builtins.isinstance", signature="(obj, class_or_tuple)")
def _isinstance(host: Host, args: Bound, call: Call) -> Value:
    obj = args["obj"]
    cls = args["class_or_tuple"]
    classes = list(cls.items) if isinstance(cls, TupleVal) else [cls]
    results = []
    for c in classes:
        if isinstance(c, ClassVal):
            results.append(_is_of_class(obj, c))
            continue
        if not isinstance(c, Api):
            return UNKNOWN
        builtin = _BUILTIN_TYPES.get(c.name)
        if builtin is not None:
            results.append(_is_of_builtin(obj, builtin))
            continue
        check = next(((p, fn) for p, fn in REGISTRY.class_checks if c.name.startswith(p)), None)
        if check is None:
            return UNKNOWN
        results.append(check[1](obj, c.name[len(check[0]) :]))
    if any(r == TRUE for r in results):
        return TRUE
    if all(r == FALSE for r in results):
        return FALSE
    return UNKNOWN


# `isinstance(recipe, str)`: the builtin types a constant or an object of the module's class is
# decided against.
_BUILTIN_TYPES: dict[str, type] = {
    f"builtins.{t.__name__}": t for t in (str, int, float, bool, bytes, complex, tuple, list, dict, set, frozenset)
}


def _is_of_builtin(obj: Value, builtin: type) -> Value:
    """`isinstance(obj, str)`: a constant by its Python value; an object of a class of the
    module whose bases are all the module's classes (or `object`) is no builtin's (a base of
    another library, `class Name(str, Enum)`, may be one)."""
    if type(obj) is Const:
        return TRUE if isinstance(obj.value, builtin) else FALSE
    if not isinstance(obj, Instance):
        return UNKNOWN
    _, foreign = _ancestry(obj.cls)
    return FALSE if all(isinstance(b, Api) and b.name == "builtins.object" for b in foreign) else UNKNOWN


def _is_of_class(obj: Value, cls: ClassVal) -> Value:
    """`isinstance(obj, C)` for a class C of the module: an object or enum member of C or of a
    subclass; a constant (a builtin's object) never is."""
    if isinstance(obj, Const):
        return FALSE
    own = obj.cls if isinstance(obj, Instance | EnumMember) else None
    if own is None:
        return UNKNOWN
    classes, _ = _ancestry(own)
    # A base of another library cannot be a class of the module.
    return TRUE if any(c is cls for c in classes) else FALSE


def _ancestry(cls: ClassVal) -> tuple[list[ClassVal], list[Value]]:
    """A class of the module and every class of the module among its bases (transitively),
    and the bases that are not the module's (a library's class, `object`, unknown)."""
    classes: list[ClassVal] = []
    foreign: list[Value] = []
    pending, seen = [cls], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        classes.append(current)
        for base in current.bases:
            if isinstance(base, ClassVal):
                pending.append(base)
            else:
                foreign.append(base)
    return classes, foreign


@model("builtins.tuple", signature="(*args)")
def _tuple(host: Host, args: Bound, call: Call) -> Value:
    if not args.positional:
        return TupleVal(())
    items = host.iterate(args.positional[0])
    return TupleVal(tuple(items)) if items is not None else UNKNOWN


@model("builtins.set", signature="(*args)")
@model("builtins.frozenset", signature="(*args)")
def _set(host: Host, args: Bound, call: Call) -> Value:
    """`frozenset(map(jnp.dtype, (...)))`: its items, for `in` (`SetVal`)."""
    if not args.positional:
        return SetVal(()) if not args.keywords else UNKNOWN
    if len(args.positional) != 1 or args.keywords:
        return UNKNOWN
    given = args.positional[0]
    if isinstance(given, SetVal):
        return SetVal(given.items)
    items = host.iterate(given)
    return SetVal(tuple(items)) if items is not None else UNKNOWN


@model("builtins.any", signature="(iterable)")
def _any(host: Host, args: Bound, call: Call) -> Value:
    """`any(dt == t for t in BAD)` in a skip guard: decided when a true item decides it, or
    every item is false."""
    return _decided(host, args["iterable"], True)


@model("builtins.all", signature="(iterable)")
def _all(host: Host, args: Bound, call: Call) -> Value:
    return _decided(host, args["iterable"], False)


def _decided(host: Host, iterable: Value, deciding: bool) -> Value:
    """`any` (`deciding` True) or `all` (False) of the items' truths: an item whose truth is
    `deciding` decides it, and all items' truths known otherwise."""
    items = host.iterate(iterable)
    if items is None:
        return UNKNOWN
    truths = [host.truth(item) for item in items]
    if deciding in truths:
        return Const(deciding)
    return Const(not deciding) if None not in truths else UNKNOWN


# The most items `map` calls its function for (past it: unknown).
MAX_MAPPED = 64


@model("builtins.map", signature="(*args)")
def _map(host: Host, args: Bound, call: Call) -> Value:
    """`map(f, xs, ...)`, called for each item as Python would (consumed whole: `tuple(map(...))`,
    `frozenset(map(jnp.dtype, ...))`, a loop over it)."""
    if len(args.positional) < 2 or args.keywords:
        return UNKNOWN
    function, *iterables = args.positional
    lists = [host.iterate(v) for v in iterables]
    if any(items is None for items in lists):
        return UNKNOWN
    rows = list(zip(*[items or [] for items in lists], strict=False))
    if len(rows) > MAX_MAPPED:
        return UNKNOWN
    return TupleVal(tuple(
        host.call_value(function, Args(list(row), {}, [], {}, True), call.node, call.frame, call.block) for row in rows
    ))


@model("builtins.filter", signature="(function, iterable)")
def _filter(host: Host, args: Bound, call: Call) -> Value:
    """`filter(lambda n: width % n == 0, CANDIDATES)`: the items the function (`None`: the
    item itself) decides true, consumed whole as `map`'s are; unknown where it decides one
    neither way."""
    items = host.iterate(args["iterable"])
    if items is None or len(items) > MAX_MAPPED or args.keywords:
        return UNKNOWN
    function = args["function"]
    kept: list[Value] = []
    for item in items:
        decided = item if isinstance(function, Const) and function.value is None else host.call_value(
            function, Args([item], {}, [None], {}, True), call.node, call.frame, call.block)
        truth = host.truth(decided)
        if truth is None:
            return UNKNOWN
        if truth:
            kept.append(item)
    return TupleVal(tuple(kept))


@model("builtins.list", signature="(*args)")
def _list(host: Host, args: Bound, call: Call) -> Value:
    if not args.positional:
        return TupleVal((), True)
    items = host.iterate(args.positional[0])
    return TupleVal(tuple(items), True) if items is not None else UNKNOWN


@model("builtins.sorted", signature="(*args, **kwargs)")
def _sorted(host: Host, args: Bound, call: Call) -> Value:
    """`sorted(CONFIGS)`: the same items (a set's once; worlds do not depend on their order),
    sorted when they, or the keys `key=` gives them, are constants that compare."""
    if len(args.positional) != 1 or not args.complete:
        return UNKNOWN
    items = host.members(args.positional[0])  # a set's, in some order
    if items is None:
        return UNKNOWN
    unsorted = TupleVal(tuple(items), True)
    reverse = args.keywords.get("reverse", FALSE)
    key = args.keywords.get("key")
    if not isinstance(reverse, Const) or set(args.keywords) - {"key", "reverse"}:
        return unsorted
    # `sorted(DTYPES, key=lambda t: jnp.dtype(t).name)`: each item's key, as it is called.
    ranks = _ranks(host, items, key, call)
    consts = [r.value for r in ranks if isinstance(r, Const)]
    if len(consts) != len(items):
        return unsorted  # the order is not known: a sweep's cases do not depend on it
    try:
        order = sorted(range(len(items)), key=consts.__getitem__, reverse=bool(reverse.value))
    except TypeError:  # keys that do not compare
        return unsorted
    return TupleVal(tuple(items[i] for i in order), True)


@model("builtins.reversed", signature="(*args)")
def _reversed(host: Host, args: Bound, call: Call) -> Value:
    items = host.iterate(args.positional[0]) if len(args.positional) == 1 else None
    return TupleVal(tuple(reversed(items)), True) if items is not None else UNKNOWN


@model("builtins.dict", signature="(*args, **kwargs)")
def _dict(host: Host, args: Bound, call: Call) -> Value:
    """`dict()`, `dict(**kw)`, a copy, and a dict of known pairs (`dict(zip(keys, values))`),
    built as Python builds it (`Host.mapping`): unknown where a key is, or where two keys may or
    may not be the same."""
    if not args.complete or len(args.positional) > 1:
        return UNKNOWN
    if not args.positional:
        return DictVal(tuple(args.keywords.items()))
    given = args.positional[0]
    if isinstance(given, DictVal | MapVal):
        if not args.keywords:
            return given  # a copy
        entries = dict_entries(given)
    else:
        items = host.iterate(given)
        if items is None:
            return UNKNOWN
        entries = []
        for item in items:
            pair = host.iterate(item)
            if pair is None or len(pair) != 2:
                return UNKNOWN
            entries.append((pair[0], pair[1]))
    return host.mapping([*entries, *((Const(k), v) for k, v in args.keywords.items())])


@model("builtins.dict.fromkeys", signature="(iterable, value=None)")
def _fromkeys(host: Host, args: Bound, call: Call) -> Value:
    """`dict.fromkeys(keys, value)`: every key of a known iterable bound to the one value. A
    list, dict or set there is one object every key shares, which a change through one key
    changes for all; containers are values here, so such a table is unknown."""
    keys = host.iterate(args["iterable"]) if args.complete else None
    value = args["value"]
    if keys is None or changes_in_place(value):
        return UNKNOWN
    return host.mapping([(key, value) for key in keys])


def _convert(fn: Callable[[Any], object]) -> Callable[[Host, Bound, Call], Value]:
    def convert(host: Host, args: Bound, call: Call) -> Value:
        v = args["x"]
        if isinstance(v, Const) and len(args.positional) == 1:
            try:
                return Const(fn(v.value))
            except Exception:
                return UNKNOWN
        return UNKNOWN

    return convert


model("builtins.int", signature="(x, ...)")(_convert(int))
model("builtins.float", signature="(x, ...)")(_convert(float))
@model("builtins.str", signature="(x, ...)")
def _str(host: Host, args: Bound, call: Call) -> Value:
    """`str(c)` of a constant; `str(np.dtype(t))`, `str(x.dtype)`: the dtype's name. (Of a
    scalar type, `str(jnp.int8)` is `"<class 'jax.numpy.int8'>"`, whose module is not known.)"""
    v = args["x"]
    if isinstance(v, DType) and v.form == "dtype" and len(args.positional) == 1:
        return Const(v.name)
    return _STR_OF_A_CONSTANT(host, args, call)


_STR_OF_A_CONSTANT = _convert(str)


model("builtins.abs", signature="(x, ...)")(_convert(abs))


@model("builtins.bool", signature="(x=False)")
def _bool(host: Host, args: Bound, call: Call) -> Value:
    truth = host.truth(args["x"])
    return UNKNOWN if truth is None else Const(truth)


def _reduce(fn: Callable[..., object], single_iterable: bool = False) -> Callable[[Host, Bound, Call], Value]:
    def reduce(host: Host, args: Bound, call: Call) -> Value:
        values = list(args.positional)
        if len(values) == 1 or single_iterable:
            items = host.iterate(values[0]) if values else None
            if items is None:
                return UNKNOWN
            values = items
        if args.keywords or not values:
            return UNKNOWN
        if not all(isinstance(v, Const) and isinstance(v.value, int | float) for v in values):
            return UNKNOWN
        try:
            return Const(fn([v.value for v in values if isinstance(v, Const)]))
        except Exception:
            return UNKNOWN

    return reduce


# Methods of a string that read it and their constant arguments only (`precision.lower()`).
_STR_METHODS = frozenset({
    "lower", "upper", "casefold", "title", "capitalize", "strip", "lstrip", "rstrip", "startswith", "endswith",
    "replace", "removeprefix", "removesuffix", "split", "rsplit", "partition", "rpartition", "count", "find",
    "isdigit", "isalpha", "isalnum", "isidentifier", "islower", "isupper", "format",
})
# A text whose replacement fields are plain (`"{}{}"`, `"{0}_{1}"`): what `format` of
# constants may fill in.
_PLAIN_FIELDS = re.compile(r"(?:[^{}]|\{\{|\}\}|\{\d*\})*")


_MAX_STR_RESULT = 4096


@attribute(Const)
def _const_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, Const)
    return Method(value, attr) if isinstance(value.value, str) and attr in _STR_METHODS else UNKNOWN


@method(Const, *_STR_METHODS, signature="(*args)")
def _str_method(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    assert isinstance(receiver, Const) and isinstance(receiver.value, str)
    name = call.node.func.attr.value if isinstance(call.node, cst.Call) and isinstance(call.node.func, cst.Attribute) \
        else None
    given: list[object] = []
    for arg in args.positional:
        if isinstance(arg, Const):
            given.append(arg.value)
        elif name in ("startswith", "endswith") and (prefixes := _prefixes(arg)) is not None:
            given.append(prefixes)  # `name.startswith(("int", "uint"))`
        else:
            return UNKNOWN
    if name not in _STR_METHODS or args.keywords:
        return UNKNOWN
    if not all(isinstance(g, str | int | tuple | None) for g in given):
        return UNKNOWN
    if name == "format" and not _PLAIN_FIELDS.fullmatch(receiver.value):
        return UNKNOWN  # a format spec (`{:>1000000}`) or a field of an argument (`{0.attr}`)
    try:
        result = getattr(receiver.value, name)(*given)
    except Exception:
        return UNKNOWN
    if len(str(result)) > _MAX_STR_RESULT:
        return UNKNOWN  # (`replace` can grow a string: kept to what a source names)
    if isinstance(result, list | tuple):
        return TupleVal(tuple(Const(r) for r in result), isinstance(result, list))
    return Const(result)


def _prefixes(value: Value) -> tuple[str, ...] | None:
    """A tuple of constant strings (`name.startswith(("int", "uint"))`), or None."""
    if isinstance(value, TupleVal) and not value.is_list and all(
            isinstance(item, Const) and isinstance(item.value, str) for item in value.items):
        return tuple(item.value for item in value.items)  # type: ignore[attr-defined]
    return None


def _extreme(fn: Callable[..., int]) -> Callable[[Host, Bound, Call], Value]:
    """`min`/`max` of constants, or of any items by the constant keys `key=` gives them
    (`max(configs, key=lambda c: (c.block_m * c.block_n, c.num_stages))`): the first item
    whose key is least or greatest, as Python picks it."""
    def extreme(host: Host, args: Bound, call: Call) -> Value:
        values = list(args.positional)
        if len(values) == 1:
            items = host.iterate(values[0])
            if items is None:
                return UNKNOWN
            values = items
        if not args.complete or set(args.keywords) - {"key", "default"}:
            return UNKNOWN
        if not values:
            return args.keywords.get("default", UNKNOWN)  # (without one, Python raises)
        plain = [_plain(rank) for rank in _ranks(host, values, args.keywords.get("key"), call)]
        if any(p is _NOT_PLAIN for p in plain):
            return UNKNOWN
        try:
            return values[fn(range(len(values)), key=plain.__getitem__)]
        except TypeError:  # keys that do not compare
            return UNKNOWN

    return extreme


_NOT_PLAIN = object()


def _ranks(host: Host, items: list[Value], key: Value | None, call: Call) -> list[Value]:
    """What `sorted`, `min` and `max` compare: each item, or what `key=` gives it."""
    if key is None or key == NONE:
        return items
    return [host.call_value(key, Args([item], {}, [None], {}, True), call.node, call.frame, call.block)
            for item in items]


def _plain(value: Value) -> object:
    """The Python value of a constant or a tuple of them; `_NOT_PLAIN` otherwise."""
    if isinstance(value, Const):
        return value.value
    if isinstance(value, TupleVal):
        items = tuple(_plain(item) for item in value.items)
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else items
    return _NOT_PLAIN


model("builtins.min", signature="(*args, **kwargs)")(_extreme(min))
model("builtins.max", signature="(*args, **kwargs)")(_extreme(max))
model("builtins.sum", signature="(*args, **kwargs)")(_reduce(sum, single_iterable=True))


@model("builtins.next", signature="(*args)")
def _next(host: Host, args: Bound, call: Call) -> Value:
    """`next(acc for kind, acc in RULES if cond)`: the first item of a generator expression
    written in the call, or the default given where it yields none. Not `next` of anything
    else: a list raises `TypeError`, an iterator made elsewhere has a state not read."""
    node = call.node
    values = args.positional
    if not (isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.GeneratorExp)
            and len(values) in (1, 2) and not args.keywords):
        return UNKNOWN
    items = host.iterate(values[0])
    if not items:
        return values[1] if items is not None and len(values) == 2 else UNKNOWN
    return items[0]


@model("builtins.getattr", signature="(o, name, ...)")
def _getattr(host: Host, args: Bound, call: Call) -> Value:
    name = args["name"]
    if isinstance(name, Const) and isinstance(name.value, str) and len(args.positional) == 2:
        return host.getattr(args["o"], name.value, call.node)
    return UNKNOWN


@model("builtins.super", signature="(*args)")
def _super(host: Host, args: Bound, call: Call) -> Value:
    """`super()` in a method (its class and first argument), `super(C, obj)`."""
    given = args.positional
    if not args.complete or args.keywords:
        return UNKNOWN
    if not given:
        found = host.method_receiver(call.frame)
        return SuperOf(*found) if found is not None else UNKNOWN
    if len(given) == 2 and isinstance(given[0], ClassVal):
        return SuperOf(given[0], given[1])
    return UNKNOWN


@model("builtins.setattr", "builtins.object.__setattr__", signature="(obj, name, value)")
def _setattr(host: Host, args: Bound, call: Call) -> Value:
    """`setattr(obj, "x", v)`, and `object.__setattr__(self, "x", v)` (a frozen dataclass's
    `__post_init__` setting a field it derives)."""
    name = args["name"]
    target = args["obj"]
    attr = name.value if isinstance(name, Const) and isinstance(name.value, str) else None
    host.store_attribute(target, attr, args["value"])
    return NONE


@model("builtins.enumerate", signature="(iterable, ...)")
def _enumerate(host: Host, args: Bound, call: Call) -> Value:
    items = host.iterate(args["iterable"])
    if items is None:
        return UNKNOWN
    return TupleVal(tuple(TupleVal((Const(i), v)) for i, v in enumerate(items)))


@model("builtins.zip", signature="(*iterables, ...)")
def _zip(host: Host, args: Bound, call: Call) -> Value:
    lists = [host.iterate(v) for v in args.positional]
    if not lists or any(x is None for x in lists):
        return UNKNOWN
    return TupleVal(tuple(TupleVal(tuple(t)) for t in zip(*[x or [] for x in lists], strict=False)))


@model("builtins.print", signature="(...)")
def _print(host: Host, args: Bound, call: Call) -> Value:
    return NONE


@model("builtins.staticmethod", signature="(f)")
def _staticmethod(host: Host, args: Bound, call: Call) -> Value:
    f = args["f"]
    if isinstance(f, Func):
        return Func(f.node, f.block, f.closure, f.defaults, f.qualname, None, origin=f.origin)
    return f


@model("builtins.call_blind_decorator", signature="(f)")
def _call_blind_decorator(host: Host, args: Bound, call: Call) -> Value:
    with contextlib.suppress(Diverges):
        host.call_value(args["f"], Args([], {}, [], {}, False), call.node, call.frame, call.block)
    return UNKNOWN


@model("builtins.never_decorator", signature="(...)")
def _never_decorator(host: Host, args: Bound, call: Call) -> Value:
    return UNKNOWN


@model("builtins.identity_decorator", signature="(f)")
def _identity_decorator(host: Host, args: Bound, call: Call) -> Value:
    return args["f"]
