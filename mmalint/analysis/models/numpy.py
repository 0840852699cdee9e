"""NumPy and jax.numpy: dtypes, array constructors, random numbers, `lax` reshapes, arrays.

`jnp.X`/`np.X` spellings of element types are dtypes; an array knows its dtype and shape.
Without `jax_enable_x64`, jax turns 64-bit dtypes into 32-bit ones: a 64-bit jax dtype is
known only where the file mentions the setting.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import libcst as cst

from mmalint.analysis.dtypes import DTYPE_CLASSES, lookup_dtype
from mmalint.analysis.host import (
    Args,
    Bound,
    Call,
    Host,
    ModelFn,
    Resolver,
    attribute,
    binary,
    method,
    model,
    resolver,
    subscript,
    value_kinds,
)
from mmalint.analysis.models.arrays import (
    agreed,
    array_binary,
    as_dtype_object,
    as_shape_value,
    index_shape,
    is_none,
    len_of,
    reversed_shape,
    signed_arg,
    to_dtype,
    transposed_view,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Api,
    Array,
    Const,
    DType,
    DTypeClass,
    DTypeSet,
    Fragment,
    IrType,
    Layout,
    Method,
    Origin,
    Ref,
    RefAt,
    TupleVal,
    Unknown,
    Value,
    dtype_names,
    join,
)
from mmalint.facts.dtypes import DTYPES
from mmalint.facts.promotion import promote


def jax_dtype(host: Host, dtype: Value) -> Value:
    """The dtype a jax array really gets for a requested dtype (a set of dtypes: each)."""
    wide = agreed(dtype, lambda i: i.bits == 64 or i.name == "complex128") is not False
    if isinstance(dtype, DType | DTypeSet) and wide and not host.mentions("enable_x64"):
        return UNKNOWN
    return dtype


def _dtype_of_name(prefix: str) -> Resolver:
    def resolve(name: str) -> Value | None:
        attr = name[len(prefix) :]
        info = lookup_dtype(attr)
        if info is not None and attr not in ("dtype",):
            return DType(info.name)
        if attr in DTYPE_CLASSES:
            return DTypeClass(attr)
        return None

    return resolve


for _prefix in ("jnp.", "np.", "ml_dtypes.", "jax.dtypes."):
    resolver(_prefix)(_dtype_of_name(_prefix))


# ---------------------------------------------------------------------- dtypes


@model("jnp.dtype", "np.dtype", signature="(dtype, ...)")
def _dtype(host: Host, args: Bound, call: Call) -> Value:
    given = args["dtype"]
    d = to_dtype(given)
    if isinstance(d, DType):
        # `jnp.dtype("int8")` decides the dtype right here; `jnp.dtype(dtype)` passes on where
        # `dtype` was decided (a parameter world, a constant...).
        origin = call.origin if isinstance(given, Const) else d.origin
        return DType(d.name, "dtype", origin=origin)
    return d


@model("jnp.issubdtype", signature="(arg1, arg2)")
def _issubdtype(host: Host, args: Bound, call: Call) -> Value:
    return _subdtype(args, numpy=False)


@model("np.issubdtype", signature="(arg1, arg2)")
def _np_issubdtype(host: Host, args: Bound, call: Call) -> Value:
    return _subdtype(args, numpy=True)


def _subdtype(args: Bound, numpy: bool) -> Value:
    """`issubdtype`: of a set of dtypes, what every member answers (`jnp.int8 if f else
    jnp.uint8` is an integer either way). NumPy's places a type ml_dtypes adds (int4,
    bfloat16, the float8s) under `np.generic` alone: `np.issubdtype(jnp.int4, np.integer)`
    is False, jax's True."""
    d = args["arg1"]
    cls = args["arg2"]
    answer: bool | None = None
    if isinstance(cls, DTypeClass):
        kinds = DTYPE_CLASSES[cls.name]
        answer = agreed(d, lambda i: i.kind in kinds and not (
            numpy and cls.name != "generic" and i.name in _ML_DTYPES_KIND))
    else:
        other = to_dtype(cls)
        if isinstance(other, DType):
            answer = agreed(d, lambda i: i.name == other.name)
    return UNKNOWN if answer is None else Const(answer)


@dataclass(frozen=True)
class TypeInfo(Value):
    """`np.iinfo(t)` / `jnp.iinfo(t)` of an integer dtype (its `bits`, `min`, `max`, `dtype`),
    `np.finfo(t)` / `jnp.finfo(t)` of a floating one (its `bits`, `dtype`)."""

    name: str


_NUMPY_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_NUMPY_FLOATS = frozenset({"float16", "float32", "float64"})
# jax's answer for the narrow types of ml_dtypes too (int4, bfloat16, the float8s); NumPy's
# raises for them.
_JAX_INTS = _NUMPY_INTS | {"int2", "uint2", "int4", "uint4"}
_JAX_FLOATS = frozenset(d.name for d in DTYPES.values() if d.kind == "float")


def _info_of(parameter: str, names: frozenset[str]) -> ModelFn:
    def info(host: Host, args: Bound, call: Call) -> Value:
        return _type_info(args[parameter], names)

    return info


model("np.iinfo", signature="(int_type)")(_info_of("int_type", _NUMPY_INTS))
model("jnp.iinfo", signature="(int_type)")(_info_of("int_type", _JAX_INTS))
model("np.finfo", signature="(dtype)")(_info_of("dtype", _NUMPY_FLOATS))
model("jnp.finfo", signature="(dtype)")(_info_of("dtype", _JAX_FLOATS))


def _type_info(given: Value, names: frozenset[str]) -> Value:
    d = to_dtype(given.dtype if isinstance(given, Array) else given)
    return TypeInfo(d.name) if isinstance(d, DType) and d.name in names else UNKNOWN


@attribute(TypeInfo)
def _type_info_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, TypeInfo)
    info = DType(value.name).info
    if attr == "bits":
        return Const(info.bits)
    if attr == "dtype":
        return DType(value.name, "dtype")
    if info.kind not in ("int", "uint"):
        return UNKNOWN  # a float's bounds and epsilon: not modelled
    signed = info.kind == "int"
    if attr == "min":
        return Const(-(1 << (info.bits - 1)) if signed else 0)
    if attr == "max":
        return Const((1 << (info.bits - (1 if signed else 0))) - 1)
    if attr == "kind":
        return Const("i" if signed else "u")
    return UNKNOWN


@model("jax.dtypes.itemsize_bits", "jax.dtypes.bit_width", signature="(dtype)")
def _bits_of_dtype(host: Host, args: Bound, call: Call) -> Value:
    bits = agreed(args["dtype"], lambda i: i.bits)
    return UNKNOWN if bits is None else Const(bits)


@model("jnp.promote_types", signature="(a, b)")
def _promote_types(host: Host, args: Bound, call: Call) -> Value:
    return _promoted([args["a"], args["b"]], call.origin)


@model("jnp.result_type", signature="(*arrays_and_dtypes)")
def _result_type(host: Host, args: Bound, call: Call) -> Value:
    if args.keywords or not args.complete or not args.positional:
        return UNKNOWN
    parts = [v.dtype if isinstance(v, Array | Ref) else v for v in args.positional]
    return _promoted(parts, call.origin)


def _promoted(values: list[Value], origin: Origin | None) -> Value:
    """jax's promotion of dtypes (`mmalint.facts.promotion`: jax's lattice, not NumPy's), where
    every input is a known dtype and jax's x64 setting does not change the result: int8 with
    float32 is float32, int8 with uint8 int16, bfloat16 with float16 float32. A pair jax cannot
    promote (fp8 with anything else) is unknown."""
    members = [dtype_names(to_dtype(v)) for v in values]
    if not members or any(m is None for m in members):
        return UNKNOWN
    results: set[str] = set()
    for names in itertools.product(*(sorted(m) for m in members if m is not None)):
        promoted = names[0] if len(set(names)) == 1 else promote(names)
        if promoted is None:
            return UNKNOWN
        results.add(promoted)
    if len(results) == 1:
        return DType(results.pop(), "dtype", origin=origin)  # jax returns a dtype object
    return DTypeSet(frozenset(results))  # inputs that are one of several dtypes


def _dtype_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, DType)
    info = value.info
    if attr == "itemsize":
        return Const(max(info.bits // 8, 1))
    if attr == "name":
        return Const(info.name)
    if attr in ("type", "dtype"):
        # `x.dtype.type` is the scalar type (`np.int8`), `jnp.int8.dtype` a dtype object: the
        # two look each other up in no set or dict.
        form = "type" if attr == "type" else "dtype"
        return value if value.form == form else DType(value.name, form, origin=value.origin)
    if attr == "kind":
        if info.name in _ML_DTYPES_KIND:
            kind = _ML_DTYPES_KIND[info.name]
            return UNKNOWN if kind is None else Const(kind)
        return Const({"int": "i", "uint": "u", "bool": "b", "float": "f", "complex": "c"}[info.kind])
    return UNKNOWN


# `dtype.kind` of the types ml_dtypes adds to NumPy (bfloat16, int4, the float8s...): "V", as a
# structured void, not "f" or "i" (ml_dtypes 0.7.0 with NumPy 2.4 and 2.5); float8_e5m2 gives "f"
# there, left unknown (it is registered otherwise than the rest).
_ML_DTYPES_KIND: dict[str, str | None] = {
    name: "V" for name in ("bfloat16", "int2", "uint2", "int4", "uint4", "float8_e4m3fn", "float8_e4m3fnuz",
                           "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4",
                           "float8_e8m0fnu", "float4_e2m1fn")
} | {"float8_e5m2": None}


attribute(DType)(_dtype_attribute)


def _dtype_equal(dtype: Value, other: Value) -> bool | None:
    """`np.dtype(t) == "int8"` compares the named dtype, but a scalar type is no string
    (`jnp.int8 == "int8"` is False: a class); anything else compares facts."""
    if isinstance(other, Const) and isinstance(other.value, str):
        if isinstance(dtype, DType) and dtype.form == "type":
            return False
        info = lookup_dtype(other.value)
        return info is not None and isinstance(dtype, DType) and info.name == dtype.name
    return NotImplemented


def _dtype_identical(left: Value, right: Value) -> bool | None:
    # `np.dtype("int8") is jnp.int8` is False: a dtype object is not a scalar type.
    assert isinstance(left, DType) and isinstance(right, DType)
    return left.form == right.form and left.name == right.name


value_kinds(DType, truthy=True, equality=_dtype_equal, identity=_dtype_identical)
value_kinds(DTypeClass, truthy=True, equality=True)


# ---------------------------------------------------------------------- constructors


def _creator(default: str | None, jax_ns: bool) -> ModelFn:
    def creator(host: Host, args: Bound, call: Call) -> Value:
        dtype = to_dtype(args["dtype"])
        if is_none(dtype):
            if default is None or not args.complete:
                dtype = UNKNOWN
            else:
                dtype = DType(default, origin=call.origin)
        if jax_ns:
            dtype = jax_dtype(host, dtype)
        shape = as_shape_value(args["shape"])
        # A constant array in a Pallas kernel lowers to a splat: it takes any layout.
        layout: Value = Layout("splat") if host.context.in_kernel and jax_ns else UNKNOWN
        return Array(dtype, shape, layout, created=call.origin, how="created")

    return creator


def _like(source: str, jax_ns: bool) -> ModelFn:
    """`zeros_like(a, dtype)` keeps a's dtype and shape; `array(object, dtype)` a's dtype."""

    def like(host: Host, args: Bound, call: Call) -> Value:
        src = args[source]
        dtype = to_dtype(args["dtype"])
        shape: Value = UNKNOWN
        if isinstance(src, Array | Ref):
            shape = src.shape
        if is_none(dtype):
            dtype = src.dtype if isinstance(src, Array | Ref) else UNKNOWN
        if jax_ns:
            dtype = jax_dtype(host, dtype)
        return Array(dtype, shape, UNKNOWN, created=call.origin, how="created")

    return like


def _keeps_dtype(host: Host, args: Bound, call: Call) -> Value:
    """`jnp.transpose(x)`, `jnp.pad(x, ...)`, `lax.collapse(x, ...)`: x's dtype, new shape."""
    src = args["a"]
    if isinstance(src, TupleVal):  # jnp.concatenate([x, y]), jnp.stack((x, y))
        dtypes = {i.dtype for i in src.items if isinstance(i, Array)}
        dtype = dtypes.pop() if len(dtypes) == 1 and all(isinstance(i, Array) for i in src.items) else UNKNOWN
    else:
        dtype = src.dtype if isinstance(src, Array) else UNKNOWN
    return Array(dtype, UNKNOWN, UNKNOWN, created=call.origin, how="created")


_KEEPS_DTYPE = ("transpose", "swapaxes", "pad", "concatenate", "stack", "reshape", "broadcast_to",
                "flip", "roll", "tile", "repeat", "squeeze", "expand_dims", "moveaxis")

for _ns, _default in (("jnp", "float32"), ("np", "float64")):
    _jax = _ns == "jnp"
    model(f"{_ns}.zeros", f"{_ns}.ones", f"{_ns}.empty", signature="(shape, dtype=None, ...)")(
        _creator(_default, _jax)
    )
    model(f"{_ns}.full", signature="(shape, fill_value, dtype=None, ...)")(_creator(None, _jax))
    model(f"{_ns}.zeros_like", f"{_ns}.ones_like", f"{_ns}.empty_like", signature="(a, dtype=None, ...)")(
        _like("a", _jax)
    )
    model(f"{_ns}.full_like", signature="(a, fill_value, dtype=None, ...)")(_like("a", _jax))
    model(f"{_ns}.array", f"{_ns}.asarray", signature="(object, dtype=None, ...)")(_like("object", _jax))
    model(*(f"{_ns}.{fn}" for fn in _KEEPS_DTYPE), signature="(a, ...)")(_keeps_dtype)

model("lax.collapse", "lax.reshape", "lax.transpose", signature="(a, ...)")(_keeps_dtype)
# `np.ascontiguousarray(b.T)`: the same array in another memory order (its dtype, its shape).
model("np.ascontiguousarray", "np.asfortranarray", signature="(a, dtype=None, *, like=None)")(_like("a", False))


@model("jnp.arange", "np.arange", signature="(..., *, dtype=None)")
def _arange(host: Host, args: Bound, call: Call) -> Value:
    dtype = to_dtype(args["dtype"])
    return Array(UNKNOWN if is_none(dtype) else dtype, UNKNOWN, UNKNOWN, created=call.origin, how="created")


@model("jnp.dot", "jnp.matmul", "np.dot", "np.matmul", signature="(a, b, *, preferred_element_type=None)")
def _dot(host: Host, args: Bound, call: Call) -> Value:
    preferred = to_dtype(args["preferred_element_type"])
    if isinstance(preferred, DType):
        return Array(preferred, UNKNOWN, UNKNOWN, created=call.origin, how="computed")
    return array_binary("@", args["a"], args["b"])


@model("jax.ShapeDtypeStruct", "mgpu.ShapeDtypeStruct", signature="(shape, dtype, ...)")
def _shape_dtype_struct(host: Host, args: Bound, call: Call) -> Value:
    return Array(to_dtype(args["dtype"]), as_shape_value(args["shape"]), UNKNOWN, created=call.origin,
                 how="declared")


@model("jax.jit", "jax.named_call", signature="(*args, **kwargs)")
def _jit(host: Host, args: Bound, call: Call) -> Value:
    if args.positional:  # `jax.jit(f)`; `jax.jit(static_argnums=...)` decorates later
        return args.positional[0]
    return Api("builtins.identity_decorator")


# ---------------------------------------------------------------------- random numbers


def _random(dtype_default: str) -> ModelFn:
    def random(host: Host, args: Bound, call: Call) -> Value:
        dtype = to_dtype(args["dtype"])
        if is_none(dtype):
            dtype = DType(dtype_default, origin=call.origin) if args.complete else UNKNOWN
        dtype = jax_dtype(host, dtype)
        return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how="created")

    return random


model("jax.random.uniform", "jax.random.normal", "jax.random.truncated_normal",
      signature="(key, shape, dtype=None, ...)")(_random("float32"))
model("jax.random.randint", signature="(key, shape, minval, maxval, dtype=None)")(_random("int32"))
model("jax.random.bits", signature="(key, shape, dtype=None)")(_random("uint32"))

_NUMPY_RNG = "np.random.Generator()"  # the value of `np.random.default_rng(...)`


@model("np.random.default_rng", "np.random.RandomState", "np.random.Generator", signature="(...)")
def _numpy_rng(host: Host, args: Bound, call: Call) -> Value:
    # jax's tests keep `np.random.default_rng(seed)` as self.prng.
    return Api(_NUMPY_RNG)


def _numpy_random(default: str, sized: bool = True, typed: bool = True) -> ModelFn:
    """`rng.uniform(lo, hi, size)`, `rng.integers(lo, hi, size, dtype)`, `np.random.randn(*dims)`:
    arrays of the `size` shape, float64 or int64."""

    def random(host: Host, args: Bound, call: Call) -> Value:
        dtype = to_dtype(args["dtype"]) if typed else NONE
        if is_none(dtype):
            dtype = DType(default, origin=call.origin) if args.complete else UNKNOWN
        shape: Value = UNKNOWN
        if not sized:
            if args.complete and not args.keywords:
                shape = as_shape_value(TupleVal(tuple(args.positional)))
        else:
            size = args["size"]
            if not is_none(size):  # no size: a scalar, not an array of a shape
                shape = as_shape_value(size)
        return Array(dtype, shape, UNKNOWN, created=call.origin, how="created")

    return random


for _owner in (_NUMPY_RNG, "np.random"):
    model(f"{_owner}.uniform", f"{_owner}.normal", signature="(low, high, size=None, ...)")(
        _numpy_random("float64", typed=False)
    )
    model(f"{_owner}.standard_normal", f"{_owner}.random", f"{_owner}.random_sample",
          signature="(size=None, dtype=None, ...)")(_numpy_random("float64"))
    model(f"{_owner}.integers", f"{_owner}.randint", signature="(low, high, size=None, dtype=None, ...)")(
        _numpy_random("int64")
    )
    model(f"{_owner}.rand", f"{_owner}.randn", signature="(*dims)")(
        _numpy_random("float64", sized=False, typed=False)
    )


# ---------------------------------------------------------------------- arrays


@attribute(Array, Ref)
def _array_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    # Arrays and refs answer alike; `x.at[idx]` is a view of a ref or `.set(...)` of an array.
    assert isinstance(value, Array | Ref)
    if attr == "dtype":
        return as_dtype_object(value.dtype)
    if attr == "shape":
        return value.shape
    if attr == "ndim":
        return len_of(value.shape)
    if attr == "T":
        if isinstance(value, Ref) and value.space == "tmem":
            # No MMA reads a transposed TMEM ref (Pallas: "Unsupported transforms for LHS").
            return Ref(value.dtype, reversed_shape(value.shape))
        if isinstance(value, Ref):
            return Ref(value.dtype, reversed_shape(value.shape), view=transposed_view(value, None), space=value.space, swizzle=value.swizzle, tiling=value.tiling)
        return Array(value.dtype, reversed_shape(value.shape), UNKNOWN, value.created, value.how)
    if attr == "at":
        return RefAt(value)
    return Method(value, attr)


@attribute(Unknown)
def _unknown_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    # `x.astype(ir_type, is_signed=...)` converts whatever x is to a fragment.
    return Method(value, attr) if attr == "astype" else UNKNOWN


@method(Array, "astype", signature="(dtype, ..., *, is_signed)")
@method(Unknown, "astype", signature="(dtype, ..., *, is_signed)")
def _astype(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    target = args["dtype"]
    if isinstance(target, IrType) or (isinstance(receiver, Unknown) and args.given("is_signed")):
        return Fragment(target, signed_arg(args, "is_signed", call), UNKNOWN, UNKNOWN, UNKNOWN,
                        created=call.origin, how="converted")
    d = to_dtype(target)
    if isinstance(d, DType):
        shape = receiver.shape if isinstance(receiver, Array) else UNKNOWN
        layout = receiver.layout if isinstance(receiver, Array) else UNKNOWN
        return Array(d, shape, layout, created=call.origin, how="converted")
    return UNKNOWN


@method(Array, "reshape", "swapaxes", "transpose", signature="(...)")
def _array_reshape(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    assert isinstance(receiver, Array)
    return Array(receiver.dtype, UNKNOWN, UNKNOWN, created=receiver.created, how=receiver.how)


@subscript(Array)
def _array_subscript(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    assert isinstance(value, Array)
    return Array(value.dtype, index_shape(value.shape, index), UNKNOWN, created=value.created, how=value.how)


@binary(Array)
def _array_binary(op: str, left: Value, right: Value) -> Value:
    return array_binary(op, left, right)


value_kinds(Array, unary_keeps=True)


# `x.at[idx].set(v)` on a jax array: a new array of x's dtype.
@attribute(RefAt)
def _at_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, RefAt)
    return Method(value, attr) if isinstance(value.ref, Array) else UNKNOWN


@method(RefAt, "set", "add", "multiply", "divide", "power", "min", "max", "apply", signature="(...)")
def _at_update(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    assert isinstance(receiver, RefAt)
    array = receiver.ref
    if not isinstance(array, Array):
        return UNKNOWN
    return Array(array.dtype, array.shape, UNKNOWN, created=call.origin, how="created")


@method(RefAt, "get", signature="(...)")
def _at_get(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    assert isinstance(receiver, RefAt)
    array = receiver.ref
    if not isinstance(array, Array):
        return UNKNOWN
    return Array(array.dtype, UNKNOWN, UNKNOWN, created=call.origin, how="created")




@model("lax.fori_loop", signature="(lower, upper, body_fun, init_val, ...)")
def _fori_loop(host: Host, args: Bound, call: Call) -> Value:
    init = args["init_val"]
    result = host.call_value(args["body_fun"], Args([UNKNOWN, init], {}, [], {}, True), call.node, call.frame,
                             call.block)
    return join(init, result)
