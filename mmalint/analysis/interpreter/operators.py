"""Python's operators over abstract values: attribute access, truth, comparison, arithmetic,
iteration and subscripts.

Core Python values (constants, tuples, dicts, functions, classes, objects, API names) are
handled here; a domain value (a fragment, an array, a dtype...) answers through the entries
its model registered for its kind (`host.REGISTRY`), so nothing here names a library.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

from mmalint.analysis import bounds, names
from mmalint.analysis.host import REGISTRY, Args, value_kinds
from mmalint.analysis.interpreter.classes import decorator_kinds, linearized, method_kinds
from mmalint.analysis.interpreter.core import Frame, Machine
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    CONTAINERS,
    UNKNOWN,
    Api,
    BoundMethod,
    ClassVal,
    Const,
    DictVal,
    DType,
    EnumMember,
    FixtureNames,
    Func,
    Instance,
    KnownTruth,
    MapVal,
    Method,
    Partial,
    ProjectModule,
    SetVal,
    SuperOf,
    TupleVal,
    Unknown,
    Value,
    as_int,
    dict_entries,
)

# Kinds tested on every attribute and truth test, as tuples: `A | B` in an `isinstance` builds
# a union each time it runs, and the test reads a tuple faster.
_HASHED = (SetVal, MapVal, DictVal)  # `in` looks a key up by hash
# The most keys of a dict whose keys are not all strings (each is compared with the others).
MAX_KEYS = 64
_DEFINED = (Func, ClassVal)
_NO_ARGUMENTS = TupleVal((UNKNOWN,), is_list=True)  # `sys.argv` of a script run with none


class Operators(Machine):
    """Attribute access and the operators."""

    # ------------------------------------------------------------------ names

    def builtin(self, name: str) -> Value:
        return Api(f"builtins.{name}") if name in REGISTRY.builtin_names else UNKNOWN

    def api_value(self, name: str, is_module: bool) -> Value:
        """The value a canonical name denotes: a module, what a model says it is (a dtype, a
        layout constant...), or the API itself."""
        if is_module:
            return Api(name, True)
        if name == "sys.argv" and self.context.script:
            return _NO_ARGUMENTS  # `python script.py`: what argparse parses there (`models/commandline.py`)
        found = REGISTRY.resolve(name)
        return found if found is not None else Api(name)

    # ------------------------------------------------------------------ attributes

    def getattr(self, value: Value, attr: str, node: cst.CSTNode) -> Value:
        if isinstance(value, Api):
            if value.is_module:
                name, is_module = names.attribute(value.name, attr)
                return self.api_value(name, is_module)
            return self.api_value(f"{value.name}.{attr}", False)
        if isinstance(value, ProjectModule):
            found = self.project_attribute(value, attr)
            return found if found is not None else UNKNOWN
        if isinstance(value, Instance):
            for trace in self._traces:  # an object's attributes change: one made before a
                trace.read_object(value)  # remembered call may read otherwise later
            if self.reads_its_own_way(value.cls):
                return UNKNOWN
            if attr in value.attrs:
                return value.attrs[attr]
            found = self.class_attr(value.cls, attr)
            if isinstance(found, Func):
                return self._method(found, value, value.cls, node)
            if found is not None:
                # Not the class's where an `__init__` not read (a library base's) or a store of
                # an unknown name may have set it on the object (`Cfg(acc=jnp.int32).acc` of a
                # pydantic model whose class says `acc = jnp.float32`).
                return UNKNOWN if "__unknown__" in value.attrs else found
            if attr == "_replace" and self.is_namedtuple(value.cls):
                # `spec._replace(dtype_name="int32")`: a new object with those fields changed,
                # as `dataclasses.replace` makes it.
                return Partial(Api("dataclasses.replace"), (value,), ())
            # A method of a base class defined elsewhere, that a model knows.
            fallback = REGISTRY.instance_attributes.get(attr)
            return fallback() if fallback is not None else UNKNOWN
        if isinstance(value, SuperOf):
            return self.super_attribute(value, attr, node)
        if isinstance(value, EnumMember):
            if attr in ("value", "_value_"):
                return value.value
            if attr in ("name", "_name_"):
                return Const(value.name)
            found = self.class_attr(value.cls, attr)
            if isinstance(found, Func):
                return self._method(found, value, value.cls, node)  # given the member
            if found is None:
                found = self.enum_member_attribute(value, attr)
            return found if found is not None else UNKNOWN
        if isinstance(value, ClassVal):
            found = self.class_attr(value, attr)
            if isinstance(found, Func) and found.owner is not None and "classmethod" in method_kinds(found):
                return BoundMethod(found, value)  # `Cfg.pick(x)`: `cls` is the class
            if found is None and attr == "__name__":
                return Const(value.name)  # `{p.__name__: p for p in POLICIES}`
            return found if found is not None else UNKNOWN
        if isinstance(value, CONTAINERS):
            return Method(value, attr)
        answer = REGISTRY.attributes.get(type(value))
        return answer(self, value, attr, node) if answer is not None else UNKNOWN

    def method_receiver(self, frame: Frame) -> tuple[ClassVal, Value] | None:
        """`super()`'s two in the method `frame` runs: the class it is defined in and its first
        argument; None in a function that is no method, or a static one."""
        node, owner = frame.function, frame.owner
        if owner is None or not isinstance(node, cst.FunctionDef):
            return None
        params = [*node.params.posonly_params, *node.params.params]
        if not params or "staticmethod" in decorator_kinds(node):
            return None
        first = frame.env.get(params[0].name.value)
        return (owner, first) if first is not None else None

    def super_attribute(self, proxy: SuperOf, attr: str, node: cst.CSTNode) -> Value:
        """`super().attr`: looked up in the classes after the proxy's in the method resolution
        order of its object's class (a class method's: the class), bound to the object; unknown
        past a base not of the checked code (it may define it). A method of another module that
        leads to no MMA call is unknown too, as before super() was read: jax's test bases chain
        `setUp` through config context managers in every world of every test (the two largest
        test files of its tree took twice as long)."""
        obj = proxy.obj
        cls = obj.cls if isinstance(obj, Instance) else obj if isinstance(obj, ClassVal) else None
        if cls is None:
            return UNKNOWN
        order = linearized(cls)
        if proxy.owner not in order:
            return UNKNOWN
        for klass in order[order.index(proxy.owner) + 1:]:
            if not isinstance(klass, ClassVal):
                return UNKNOWN
            found = self.own_attr(cls, klass, attr)
            if found is None:
                continue
            if not isinstance(found, Func):
                return found
            home = proxy.owner.block.source if proxy.owner.block is not None else None
            if self.program is not None and found.block.source is not home and not self.program.leads_to_mma(found.block):
                return UNKNOWN
            if isinstance(obj, Instance):
                return self._method(found, obj, cls, node)
            return BoundMethod(found, cls) if "classmethod" in method_kinds(found) else found
        return UNKNOWN

    def _method(self, func: Func, obj: Value, cls: ClassVal, node: cst.CSTNode) -> Value:
        """A function of a class read through an object of it (or an enum member): bound to
        it; to the class for a class method; the value of a property; a static method or a
        function not of the class (stored on it) as it is."""
        kinds = method_kinds(func)
        if func.owner is None or "staticmethod" in kinds:
            return func
        if "property" in kinds:
            return self.call_function(func, Args([obj], {}, [None], {}), node)
        return BoundMethod(func, cls if "classmethod" in kinds else obj)

    # ------------------------------------------------------------------ operators

    def truth(self, value: Value) -> bool | None:
        if isinstance(value, KnownTruth):
            return value.truth
        if isinstance(value, Const):
            try:
                return bool(value.value)
            except Exception:
                return None
        if isinstance(value, CONTAINERS):
            return bool(value.items)
        if isinstance(value, Api) and value.name in REGISTRY.both_ways:
            return True
        if isinstance(value, _DEFINED) or REGISTRY.truthy.get(type(value)):
            return True
        return None

    def compare(self, op: str, left: Value, right: Value) -> bool | None:
        if op in ("Equal", "NotEqual"):
            eq = self._equal(left, right)
            if eq is None:
                return None
            return eq if op == "Equal" else not eq
        if op in ("Is", "IsNot"):
            same: bool | None
            if isinstance(left, Const) and isinstance(right, Const):
                same = left.value is right.value or (left.value is None and right.value is None)
            elif _is_none(left) or _is_none(right):
                other = right if _is_none(left) else left
                same = False if other.known and not isinstance(other, Unknown) else None  # an object is not None
                if _is_none(left) and _is_none(right):
                    same = True
            elif type(left) is type(right) and (identical := REGISTRY.identities.get(type(left))) is not None:
                same = identical(left, right)
            else:
                same = None
            if same is None:
                return None
            return same if op == "Is" else not same
        if op in ("In", "NotIn"):
            if isinstance(right, FixtureNames):
                # `"dtype" in metafunc.fixturenames`: one of the test's parameters is.
                held = isinstance(left, Const) and left.value in right.names
                return (op == "In") if held else None
            if isinstance(right, _HASHED):
                found = self.found_in(left, right)
                return None if found is None else found if op == "In" else not found
            items = self.iterate(right)
            if items is None:
                if isinstance(right, Const) and isinstance(right.value, str) and isinstance(left, Const):
                    try:
                        found = left.value in right.value
                    except TypeError:
                        return None
                    return found if op == "In" else not found
                return None
            results = [self._equal(left, item) for item in items]
            if any(r is True for r in results):
                found_any = True
            elif all(r is False for r in results):
                found_any = False
            else:
                return None
            return found_any if op == "In" else not found_any
        if isinstance(left, SetVal) and isinstance(right, SetVal) and op in _ORDERINGS:
            return self._set_order(op, left, right)
        if isinstance(left, Const) and isinstance(right, Const):
            fn = _ORDERINGS.get(op)
            if fn is None:
                return None
            try:
                return bool(fn(left.value, right.value))
            except Exception:
                return None
        return None

    def _set_order(self, op: str, left: SetVal, right: SetVal) -> bool | None:
        """`a <= b` (a subset), `a < b`, `a >= b`, `a > b` of two sets: None where an item's
        membership in the other is not decided."""
        def within(inner: SetVal, outer: SetVal) -> bool | None:
            found = [self.found_in(item, outer) for item in inner.items]
            return False if False in found else None if None in found else True

        forward = within(left, right) if op in ("LessThanEqual", "LessThan") else within(right, left)
        if forward is not True or op in ("LessThanEqual", "GreaterThanEqual"):
            return forward
        backward = within(right, left) if op == "LessThan" else within(left, right)
        return None if backward is None else not backward

    def members(self, value: Value) -> list[Value] | None:
        if not isinstance(value, SetVal) or value.ordered:
            return self.iterate(value)
        kept = self._distinct([(item, item) for item in value.items])
        return None if kept is None else [k for k, _ in kept]

    def mapping(self, entries: Sequence[tuple[Value, Value]]) -> Value:
        """The dict `entries` build in order (a key given twice keeps its first place and its
        last value): a DictVal when every key is a string, else a MapVal when every key is
        known and every two are decided distinct or the same, else UNKNOWN."""
        if all(isinstance(k, Const) and isinstance(k.value, str) for k, _ in entries):
            named: dict[str, Value] = {}
            for key, value in entries:
                named[key.value] = value  # type: ignore[attr-defined]
            return DictVal(tuple(named.items()))
        if len(entries) > MAX_KEYS or not all(key.known for key, _ in entries):
            return UNKNOWN
        kept = self._distinct(entries)
        return UNKNOWN if kept is None else MapVal(tuple((k, v) for k, v in kept))

    def _distinct(self, entries: Sequence[tuple[Value, Value]]) -> list[list[Value]] | None:
        """Entries whose keys a set or dict holds once: a key found again keeps its first place
        and takes the later value; None when two keys may or may not be the same."""
        kept: list[list[Value]] = []
        for key, value in entries:
            for pair in kept:
                same = self.member(key, pair[0])
                if same is None:
                    return None
                if same:
                    pair[1] = value
                    break
            else:
                kept.append([key, value])
        return kept

    def found_in(self, key: Value, container: SetVal | MapVal | DictVal) -> bool | None:
        """`key in container` for a set or a dict (its keys): None when a comparison that
        could decide it is not decided."""
        keys = container.items if isinstance(container, SetVal) else [k for k, _ in dict_entries(container)]
        undecided = False
        for item in keys:
            same = self.member(key, item)
            if same is True:
                return True
            undecided = undecided or same is None
        return None if undecided else False

    def entry(self, mapping: MapVal, key: Value) -> tuple[bool | None, Value]:
        """`mapping[key]`: (True, its value) when found, (False, UNKNOWN) when no key is it,
        (None, UNKNOWN) when a comparison that could decide it is not decided."""
        for k, v in mapping.items:
            same = self.member(key, k)
            if same is True:
                return True, v
            if same is None:
                return None, UNKNOWN
        return False, UNKNOWN

    def member(self, left: Value, key: Value) -> bool | None:
        """Whether `left` finds `key` in a set or among a dict's keys. Python compares hashes
        first, then `==`: so a dtype object (`x.dtype`, `jnp.dtype(t)`) finds neither a scalar
        type (`jnp.int8`) nor a name ('int8'), though `==` says each is equal to it."""
        if isinstance(left, Unknown) or isinstance(key, Unknown):
            return None
        # A member hashes as its name, or as its value where its class mixes in str or int
        # (which it then equals): `{Precision.INT8: ...}["int8"]` finds it then only.
        if isinstance(left, EnumMember):
            same = enum_equal(left, key)
            return same if same is not NotImplemented else False
        if isinstance(key, EnumMember):
            same = enum_equal(key, left)
            return same if same is not NotImplemented else False
        if isinstance(left, Const) and isinstance(key, Const):
            try:
                return hash(left.value) == hash(key.value) and bool(left.value == key.value)
            except Exception:
                return None
        if isinstance(left, DType) and isinstance(key, DType):
            return left.form == key.form and left.name == key.name
        plain = (Const, DType, TupleVal)
        if isinstance(left, plain) and isinstance(key, plain) and type(left) is not type(key):
            return False  # a tuple, a dtype, a literal: never equal to one of another kind
        if isinstance(left, TupleVal) and isinstance(key, TupleVal):
            return _pairwise(self.member, left, key)
        if type(left) is type(key) and (type(left) in REGISTRY.equality_kinds or isinstance(left, Api)):
            return True if self._equal(left, key) is True else None
        return None

    def _equal(self, left: Value, right: Value) -> bool | None:
        if isinstance(left, Unknown) or isinstance(right, Unknown):
            return None
        # A domain kind may decide first (`dtype == "int8"`, a layout of unknown width).
        for one, other in ((left, right), (right, left)):
            decide = REGISTRY.equalities.get(type(one))
            if decide is not None:
                decided = decide(one, other)
                if decided is not NotImplemented:
                    return decided
        if _by_facts(left) and _by_facts(right):
            if type(left) is not type(right):
                return False
            if isinstance(left, TupleVal) and isinstance(right, TupleVal):
                return _pairwise(self._equal, left, right)
            if isinstance(left, Const) and isinstance(right, Const):
                try:
                    return bool(left.value == right.value)
                except Exception:
                    return None
            return left == right
        if isinstance(left, Api) and isinstance(right, Api) and not (left.is_module or right.is_module):
            return True if left.name == right.name else None
        return None

    def binary(self, op: str | None, left: Value, right: Value, node: cst.CSTNode) -> Value:
        if op is None:
            return UNKNOWN
        if isinstance(left, Const) and isinstance(right, Const):
            fn = _CONST_OPS.get(op)
            if fn is None:
                return UNKNOWN
            try:
                if op == "**" and isinstance(right.value, int) and abs(right.value) > 64:
                    return UNKNOWN
                if not bounds.affordable(op, left.value, right.value):
                    return UNKNOWN  # priced before it is done: `'a' * 10**9`, `1 << 10**10`
                result = fn(left.value, right.value)
            except Exception:
                return UNKNOWN
            if isinstance(result, int) and abs(result) > 1 << 64:
                return UNKNOWN
            return Const(result)
        if isinstance(left, TupleVal) and isinstance(right, TupleVal) and op == "+":
            return TupleVal(left.items + right.items, left.is_list)
        if isinstance(left, TupleVal) and isinstance(right, Const) and op == "*":
            count = right.value
            if isinstance(count, int) and 0 <= count * len(left.items) <= 256:
                return TupleVal(left.items * count, left.is_list)
            return UNKNOWN
        if isinstance(left, SetVal) and isinstance(right, SetVal):
            return self.set_operation(op, left, right)
        if op == "|" and isinstance(left, DictVal | MapVal) and isinstance(right, DictVal | MapVal):
            return self.mapping([*dict_entries(left), *dict_entries(right)])  # a merge: the right wins
        answer = REGISTRY.binary_for(left, right)
        return answer(op, left, right) if answer is not None else UNKNOWN

    def set_operation(self, op: str, left: SetVal, right: SetVal) -> Value:
        """`a | b`, `a & b`, `a - b`, `a ^ b` of two sets (a dict's keys among them): UNKNOWN
        where an item's membership in the other is not decided."""
        if op == "|":
            return SetVal(left.items + right.items)
        if op not in ("&", "-", "^"):
            return UNKNOWN
        kept: list[Value] = []
        for item in left.items:  # `&` keeps those found in the other, `-` and `^` the rest
            found = self.found_in(item, right)
            if found is None:
                return UNKNOWN
            if found is (op == "&"):
                kept.append(item)
        if op == "^":
            for item in right.items:
                found = self.found_in(item, left)
                if found is None:
                    return UNKNOWN
                if not found:
                    kept.append(item)
        return SetVal(tuple(kept))

    def unary(self, op: str, operand: Value) -> Value:
        if op == "Not":
            truth = self.truth(operand)
            return UNKNOWN if truth is None else Const(not truth)
        if isinstance(operand, Const) and isinstance(operand.value, int | float):
            if op == "Minus":
                return Const(-operand.value)
            if op == "Plus":
                return operand
            if op == "BitInvert" and isinstance(operand.value, int):
                return Const(~operand.value)
        if REGISTRY.unaries.get(type(operand)):
            return operand
        return UNKNOWN

    def iterate(self, value: Value) -> list[Value] | None:
        if isinstance(value, TupleVal):
            return list(value.items)
        if isinstance(value, ClassVal) and self.enum_kind(value) is not None:
            return list(self.enum_members(value))  # `for mode in QuantMode:`
        if isinstance(value, DictVal | MapVal):
            return [k for k, _ in dict_entries(value)]
        if isinstance(value, SetVal) and value.ordered:
            return list(value.items)
        return None

    def subscript(self, value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
        if isinstance(value, TupleVal):
            i = as_int(index)
            if i is not None:
                if -len(value.items) <= i < len(value.items):
                    return value.items[i]
                return UNKNOWN
            if isinstance(index, TupleVal) and index.items and index.items[0] == Const("slice"):
                limits = [b.value if isinstance(b, Const) else ... for b in index.items[1:]]
                ints = [b for b in limits if b is None or isinstance(b, int)]
                if len(ints) == len(limits):
                    lo, hi, step = ([*ints, None, None, None])[:3]
                    return TupleVal(value.items[slice(lo, hi, step)], value.is_list)
            return UNKNOWN
        if isinstance(value, DictVal) and isinstance(index, Const) and isinstance(index.value, str):
            found = value.get(index.value)
            return found if found is not None else UNKNOWN
        if isinstance(value, MapVal):
            return self.entry(value, index)[1]
        if isinstance(value, Instance) and not self.reads_its_own_way(value.cls):
            # `WARP_PRECISION[jnp.bfloat16]`: its class's `__getitem__`, given the object
            method = self.class_attr(value.cls, "__getitem__")
            if isinstance(method, Func) and not method_kinds(method):
                return self.call_function(method, Args([value, index], {}, [None, None], {}), node)
        if isinstance(value, ClassVal) and isinstance(index, Const) and self.enum_kind(value) is not None:
            # `Precision["INT8"]`: the member of that name (Python raises KeyError for none).
            return next((m for m in self.enum_members(value) if m.name == index.value), UNKNOWN)
        answer = REGISTRY.subscripts.get(type(value))
        return answer(value, index, node, block) if answer is not None else UNKNOWN


def _pairwise(same: Callable[[Value, Value], bool | None], left: TupleVal, right: TupleVal) -> bool | None:
    """Two tuples item by item: False when their lengths or an item differ, True when every
    item is the same, else None."""
    if len(left.items) != len(right.items):
        return False
    parts = [same(a, b) for a, b in zip(left.items, right.items, strict=True)]
    if any(p is False for p in parts):
        return False
    return True if all(p is True for p in parts) else None


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def enum_equal(one: EnumMember, other: Value) -> bool | None:
    """`member == other`: the same member; its raw value where its class mixes in str or int
    (`Precision.INT8 == "int8"`), never for a plain enum; NotImplemented for other kinds."""
    if isinstance(other, EnumMember):
        return one.cls is other.cls and one.name == other.name
    if isinstance(other, Const):
        if one.mixin is None:
            return False
        if not isinstance(one.value, Const):
            return None
        try:
            return bool(one.value.value == other.value)
        except Exception:
            return None
    return NotImplemented


def _enum_equality(one: Value, other: Value) -> bool | None:
    assert isinstance(one, EnumMember)
    return enum_equal(one, other)


value_kinds(EnumMember, equality=_enum_equality, identity=_enum_equality)  # a member is one object


def _by_facts(value: Value) -> bool:
    """Constants, tuples and the domain kinds registered as compared by their facts."""
    return isinstance(value, Const | TupleVal) or type(value) in REGISTRY.equality_kinds


_ORDERINGS: dict[str, Callable[[Any, Any], object]] = {
    "LessThan": operator.lt,
    "GreaterThan": operator.gt,
    "LessThanEqual": operator.le,
    "GreaterThanEqual": operator.ge,
}

_CONST_OPS: dict[str, Callable[[object, object], object]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
