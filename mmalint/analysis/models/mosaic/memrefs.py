"""Memory references: `mgpu.utils` memref helpers, dynamic slices, and what a `Ref` answers."""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import Bound, Call, Host, method, model, subscript, value_kinds
from mmalint.analysis.models.arrays import (
    as_shape_value,
    index_shape,
    indexed_view,
    transposed_view,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    UNKNOWN,
    Array,
    Const,
    Origin,
    Ref,
    RefAt,
    TupleVal,
    Value,
    as_int,
)


@model("mgpu.utils.memref_transpose", "plgpu.transpose_ref", signature="(ref, permutation)")
def _memref_transpose(host: Host, args: Bound, call: Call) -> Value:
    ref = args["ref"]
    if not isinstance(ref, Ref):
        return UNKNOWN
    perm = args["permutation"]
    shape: Value = UNKNOWN
    if isinstance(ref.shape, TupleVal) and isinstance(perm, TupleVal):
        idx = [as_int(p) for p in perm.items]
        if all(i is not None and 0 <= i < len(ref.shape.items) for i in idx) and len(idx) == len(
            ref.shape.items
        ):
            shape = TupleVal(tuple(ref.shape.items[i] for i in idx if i is not None))
    if ref.space == "tmem":
        return Ref(ref.dtype, shape)  # no MMA reads a transposed TMEM ref
    return Ref(ref.dtype, shape, view=transposed_view(ref, perm), space=ref.space, swizzle=ref.swizzle,
               tiling=ref.tiling)


@model("mgpu.utils.memref_slice", signature="(ref, index)")
def _memref_slice(host: Host, args: Bound, call: Call) -> Value:
    ref = args["ref"]
    if not isinstance(ref, Ref):
        return UNKNOWN
    index = args["index"]
    return Ref(ref.dtype, index_shape(ref.shape, index), view=indexed_view(ref, index), space=ref.space, swizzle=ref.swizzle,
               tiling=ref.tiling, packing=ref.packing, collective=ref.collective)


@model("mgpu.utils.tile_shape", signature="(shape, tiling)")
def _tile_shape(host: Host, args: Bound, call: Call) -> Value:
    """`mgpu.tile_shape((m, k), (8, 64))` -> (m // 8, k // 64, 8, 64)."""
    shape = args["shape"]
    tiling = args["tiling"]
    if not (isinstance(shape, TupleVal) and isinstance(tiling, TupleVal)):
        return UNKNOWN
    dims = [as_int(d) for d in shape.items]
    tiles = [as_int(t) for t in tiling.items]
    if None in tiles or len(tiles) > len(dims):
        return UNKNOWN
    lead = dims[: len(dims) - len(tiles)]
    tiled = dims[len(dims) - len(tiles):]
    outer: list[int | None] = []
    for d, t in zip(tiled, tiles, strict=True):
        outer.append(d // t if d is not None and t and d % t == 0 else None)
    return TupleVal(tuple(Const(x) if x is not None else UNKNOWN for x in (*lead, *outer, *tiles)))


@model("pl.ds", "pl.dslice", "mgpu.utils.ds", "plgpu.ds", signature="(start, size, stride=1, *, length)")
def _dynamic_slice(host: Host, args: Bound, call: Call) -> Value:
    """`pl.ds(start, size)` / `mgpu.ds(base, length)`: a slice of known length."""
    if "size" in args.keywords:
        size = args["size"]
    elif args.given("length"):
        size = args["length"]
    elif args.given("size"):
        size = args["size"]
    else:
        size = args["start"]  # `pl.ds(n)` is `pl.ds(0, n)`
    stride = args["stride"]
    if as_int(stride) != 1:
        return TupleVal((Const("ds"), size, stride))
    return TupleVal((Const("ds"), size))


@model("mgpu.utils.memref_fold", "mgpu.utils.memref_unfold", "mgpu.utils.memref_unsqueeze",
       signature="(ref, ...)")
def _memref_same_dtype(host: Host, args: Bound, call: Call) -> Value:
    ref = args["ref"]
    return Ref(ref.dtype, UNKNOWN) if isinstance(ref, Ref) else UNKNOWN


@model("mgpu.utils.memref_reshape", signature="(ref, shape)")
def _memref_reshape(host: Host, args: Bound, call: Call) -> Value:
    ref = args["ref"]
    return Ref(ref.dtype, as_shape_value(args["shape"])) if isinstance(ref, Ref) else UNKNOWN


# A Ref's attributes are an array's (`models/numpy.py`).


@method(Ref, "reshape", "transpose", signature="(...)")
def _ref_reshape(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    assert isinstance(receiver, Ref)
    return Ref(receiver.dtype, UNKNOWN)


@method(Ref, "bitcast", "reinterpret", signature="(...)")
def _ref_bitcast(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    return Ref(UNKNOWN, UNKNOWN)


@subscript(Ref)
def _ref_subscript(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    assert isinstance(value, Ref)
    return Array(value.dtype, index_shape(value.shape, index), UNKNOWN, created=Origin(block, node), how="read")


@subscript(RefAt)
def _at_subscript(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    assert isinstance(value, RefAt)
    ref = value.ref
    if isinstance(ref, Ref):
        # A TMEM slice keeps its allocation as where it was made (its packing is that one's).
        origin = ref.origin if ref.space == "tmem" else None
        return Ref(ref.dtype, index_shape(ref.shape, index), origin=origin, view=indexed_view(ref, index),
                   space=ref.space, swizzle=ref.swizzle, tiling=ref.tiling, packing=ref.packing,
                   collective=ref.collective)
    if isinstance(ref, Array):
        return value  # `x.at[idx]` of an array, waiting for `.set(...)`
    return UNKNOWN


value_kinds(Ref, truthy=True)
