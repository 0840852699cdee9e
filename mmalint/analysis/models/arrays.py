"""What the array models of every library share: dtype coercion, shapes, indexing, views.

Not a model itself: `numpy`, `mosaic` and `pallas` models build on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mmalint.analysis.dtypes import DTYPES, DTypeInfo, lookup_dtype
from mmalint.analysis.host import Bound, Call
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Array,
    Const,
    DictVal,
    DType,
    DTypeSet,
    Ref,
    SomeInt,
    TupleVal,
    Unknown,
    Value,
    as_int,
    dtype_names,
    join,
)

T = TypeVar("T")


def is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def to_dtype(value: Value) -> Value:
    """A dtype from `jnp.int8`, `"int8"`, `np.dtype(...)`, an array, or UNKNOWN (a set of dtypes
    stays one: `DTypeSet`)."""
    if isinstance(value, DType | DTypeSet):
        return value
    if isinstance(value, Const) and isinstance(value.value, str):
        info = lookup_dtype(value.value)
        return DType(info.name, origin=value.origin) if info is not None else UNKNOWN
    if isinstance(value, Array | Ref):
        return value.dtype
    if is_none(value):
        return value
    return UNKNOWN


def agreed(value: Value, fact: Callable[[DTypeInfo], T]) -> T | None:
    """What every dtype `value` may be says of `fact` (the bit width, integer-ness...): the one
    answer of a known dtype, the common answer of a set of them, None otherwise."""
    names = dtype_names(to_dtype(value))
    if not names:
        return None
    answers = {fact(DTYPES[n]) for n in names}
    return answers.pop() if len(answers) == 1 else None


def as_dtype_object(value: Value) -> Value:
    """`x.dtype` is always a `np.dtype` object, whatever spelling created x."""
    if isinstance(value, DType) and value.form != "dtype":
        return DType(value.name, "dtype", origin=value.origin)
    return value


def as_shape_value(value: Value) -> Value:
    if isinstance(value, TupleVal):
        return value
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return TupleVal((value,))
    return UNKNOWN


def len_of(shape: Value) -> Value:
    return Const(len(shape.items)) if isinstance(shape, TupleVal) else UNKNOWN


def reversed_shape(shape: Value) -> Value:
    if isinstance(shape, TupleVal):
        return TupleVal(tuple(reversed(shape.items)))
    return UNKNOWN


def is_full_index(index: Value) -> bool:
    if isinstance(index, Const) and index.value is ...:
        return True
    if isinstance(index, TupleVal) and index.items and index.items[0] == Const("slice"):
        return all(is_none(b) for b in index.items[1:])
    if isinstance(index, TupleVal):
        return all(is_full_index(i) for i in index.items) and bool(index.items)
    return False


def untiled_shape(shape: Value) -> Value:
    """The logical shape of a tiled SMEM ref: (m/tm, k/tk, tm, tk) -> (m, k)."""
    if not isinstance(shape, TupleVal):
        return UNKNOWN
    dims = [as_int(d) for d in shape.items]
    if len(dims) == 2:
        return shape
    known = [d for d in dims if d is not None]
    if len(dims) == 4 and len(known) == 4:
        a, b, c, d = known
        return TupleVal((Const(a * c), Const(b * d)))
    return UNKNOWN


def index_shape(shape: Value, index: Value) -> Value:
    """The shape of `x[index]` for a known shape: slices, `pl.ds`, ints, `...`."""
    if not isinstance(shape, TupleVal):
        return UNKNOWN
    parts: list[Value] = list(index.items) if isinstance(index, TupleVal) and _is_index_tuple(index) else [index]
    dims = list(shape.items)
    out: list[Value] = []
    i = 0
    for n, part in enumerate(parts):
        if isinstance(part, Const) and part.value is ...:
            remaining = len(parts) - n - 1
            keep = len(dims) - i - remaining
            if keep < 0:
                return UNKNOWN
            out.extend(dims[i : i + keep])
            i += keep
            continue
        if i >= len(dims):
            return UNKNOWN
        dim = as_int(dims[i])
        if _is_int_index(part):
            i += 1
            continue
        if isinstance(part, TupleVal) and part.items and part.items[0] == Const("ds"):
            size = part.items[1] if len(part.items) > 1 else UNKNOWN
            out.append(size if as_int(size) is not None else UNKNOWN)
            i += 1
            continue
        if isinstance(part, TupleVal) and part.items and part.items[0] == Const("slice"):
            lo, hi, step = ((*part.items[1:], NONE, NONE, NONE))[:3]
            if not is_none(step) and as_int(step) != 1:
                out.append(UNKNOWN)
            else:
                start = 0 if is_none(lo) else as_int(lo)
                stop = dim if is_none(hi) else as_int(hi)
                if start is None or stop is None:
                    out.append(UNKNOWN)
                else:
                    if dim is not None:
                        start, stop = min(max(start, 0), dim), min(max(stop, 0), dim)
                    out.append(Const(max(stop - start, 0)))
            i += 1
            continue
        return UNKNOWN  # an array index, a mask...: not modelled
    out.extend(dims[i:])
    return TupleVal(tuple(out))


def _is_index_tuple(index: Value) -> bool:
    return isinstance(index, TupleVal) and not (
        index.items and index.items[0] in (Const("slice"), Const("ds"))
    )


def leaves(tree: Value) -> list[Value] | None:
    """The leaves of a pytree of arrays / ShapeDtypeStructs, or None when not decidable."""
    if isinstance(tree, TupleVal):
        found: list[Value] = []
        for item in tree.items:
            inner = leaves(item)
            if inner is None:
                return None
            found.extend(inner)
        return found
    if isinstance(tree, Array | Ref):
        return [tree]
    if isinstance(tree, (Unknown, DictVal)):
        return None
    return [tree]


def as_ref(value: Value, view: str | None = None, space: str | None = None) -> Value:
    """A kernel argument for an array or a `ShapeDtypeStruct`; `view="plain"` for the kernel's
    own global-memory buffers, which are row-major, and for SMEM scratch (`space="smem"`, or a
    `plgpu.SMEM(...)` scratch type)."""
    if isinstance(value, Array):
        if value.how == SMEM_SCRATCH:
            view, space = "plain", "smem"
        if value.how == TMEM_SCRATCH:
            return tmem_ref(value)
        return Ref(value.dtype, value.shape, origin=value.origin, view=view, space=space, swizzle=value.swizzle,
                   tiling=value.tiling)
    if isinstance(value, Ref):
        return value
    return UNKNOWN


# How `plgpu.SMEM(shape, dtype)` marks the scratch type it describes.
SMEM_SCRATCH = "smem scratch"
# How `plgpu.TMEM(...)` / `mgpu.TMEM(...)` mark theirs: the body gets a ref in tensor memory.
TMEM_SCRATCH = "tmem scratch"


def tmem_ref(value: Array) -> Ref:
    """The TMEM ref a kernel body gets for a TMEM scratch type: its dtype and shape, and the
    packing and collectiveness it was allocated with."""
    return Ref(value.dtype, value.shape, origin=value.origin, space="tmem", packing=value.packing,
               collective=value.collective)


def transposed_view(ref: Ref, perm: Value | None) -> str | None:
    """The view after `memref_transpose(ref, perm)` (`perm` None: `.T`): flipped when exactly
    the last two axes of a known-rank ref swap, kept for the identity, unknown otherwise."""
    if ref.view is None or not isinstance(ref.shape, TupleVal):
        return None
    rank = len(ref.shape.items)
    if perm is None:
        order: list[int | None] = list(range(rank - 1, -1, -1))
    elif isinstance(perm, TupleVal):
        order = [as_int(p) for p in perm.items]
    else:
        return None
    if rank < 2 or len(order) != rank:
        return None
    if order == list(range(rank)):
        return ref.view
    if order == [*range(rank - 2), rank - 1, rank - 2]:
        return "transposed" if ref.view == "plain" else "plain"
    return None


def indexed_view(ref: Ref, index: Value) -> str | None:
    """A view survives indexing that keeps the last two axes whole-step (slices, `ds`,
    leading integers): the contiguous axis stays where it was."""
    if ref.view is None or not isinstance(ref.shape, TupleVal):
        return None
    rank = len(ref.shape.items)
    parts: list[Value] = list(index.items) if isinstance(index, TupleVal) and _is_index_tuple(index) else [index]
    if any(isinstance(p, Const) and p.value is ... for p in parts):
        before = []
        for p in parts:
            if isinstance(p, Const) and p.value is ...:
                break
            before.append(p)
        parts = before  # what follows `...` indexes the trailing axes: only trust leading parts
        if len(parts) > rank - 2:
            return None
    if len(parts) <= rank - 2:
        return ref.view if all(_is_axis_index(p) for p in parts) else None
    for p in parts[:rank - 2]:
        if not _is_axis_index(p):
            return None
    for p in parts[rank - 2:]:
        if not _is_whole_step(p):
            return None
    return ref.view


def _is_int_index(part: Value) -> bool:
    """An integer index, known (`0`) or not (`for step in range(n)`): it drops its axis."""
    return isinstance(part, SomeInt) or as_int(part) is not None


def _is_axis_index(part: Value) -> bool:
    return _is_int_index(part) or _is_whole_step(part)


def _is_whole_step(part: Value) -> bool:
    """A unit-step slice or `pl.ds(start, size)` (no stride)."""
    if isinstance(part, TupleVal) and part.items and part.items[0] == Const("ds"):
        return len(part.items) <= 2
    if isinstance(part, TupleVal) and part.items and part.items[0] == Const("slice"):
        step = part.items[3] if len(part.items) > 3 else NONE
        return is_none(step) or as_int(step) == 1
    return False


def load_view(ref: Ref, args: Bound) -> str | None:
    """The view a load reads through, when it decides whether the load works: only for
    `optimized=False` loads (an optimized load from global memory fails for its own reasons,
    and one from shared memory may use `ldmatrix.trans`). Not for SMEM scratch, whose view
    only wgmma reads."""
    if ref.space == "smem":
        return None
    optimized = args.keywords.get("optimized")
    if isinstance(optimized, Const) and optimized.value is False:
        return ref.view
    return None


def array_binary(op: str, left: Value, right: Value) -> Value:
    dtypes = [v.dtype for v in (left, right) if isinstance(v, Array)]
    scalars = [v for v in (left, right) if isinstance(v, Const)]
    if len(dtypes) == 2:
        dtype = dtypes[0] if dtypes[0] == dtypes[1] else UNKNOWN
    elif len(dtypes) == 1 and len(scalars) == 1:
        dtype = dtypes[0]
        scalar = scalars[0].value
        if isinstance(dtype, DType) and isinstance(scalar, float) and not dtype.info.is_floating:
            dtype = UNKNOWN
    else:
        dtype = UNKNOWN
    shape: Value = UNKNOWN
    arrays = [v for v in (left, right) if isinstance(v, Array)]
    if op != "@" and arrays:
        shape = arrays[0].shape
        for a in arrays[1:]:
            shape = join(shape, a.shape)
    return Array(dtype, shape, UNKNOWN, how="computed")


def signed_arg(args: Bound, keyword: str, call: Call) -> Value:
    """The `is_signed=` a fragment is built with: None (jax's default) when not passed."""
    if keyword in args.keywords:
        return args.keywords[keyword]
    if not args.complete:
        return UNKNOWN
    return Const(None, origin=call.origin)
