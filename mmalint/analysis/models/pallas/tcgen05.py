"""Pallas's `plgpu.tcgen05_mma(acc, a, b, barrier=None, ...)`: the tcgen05 MMA over refs, an
accumulator allocated with `plgpu.TMEM(shape, dtype)` and SMEM (or TMEM) operands.

Recorded as a site of family "tcgen05" like Mosaic GPU's `tcgen05.mma` (which its lowering
calls with the same refs, under either lowering semantics), with `collective_axis` for
`collective`.
"""

from __future__ import annotations

from mmalint.analysis.host import Bound, Call, Host, model
from mmalint.analysis.models.arrays import TMEM_SCRATCH, as_shape_value, is_none, to_dtype
from mmalint.analysis.models.mosaic.tcgen05 import given, record, scale_options, tmem_flag
from mmalint.analysis.values import (
    FALSE,
    NONE,
    TRUE,
    UNKNOWN,
    Array,
    Const,
    DType,
    Ref,
    TmemLayout,
    Value,
)

PLGPU_API = "plgpu.tcgen05_mma"


@model(
    PLGPU_API,
    signature="(acc, a, b, barrier=None, *, a_scale=None, b_scale=None, a_sparse_metadata=None,"
    " accumulate=True, collective_axis=None)",
)
def _tcgen05_mma(host: Host, args: Bound, call: Call) -> Value:
    axis = args["collective_axis"]
    collective: Value = FALSE if is_none(axis) else TRUE if axis.known else UNKNOWN
    accumulate = args["accumulate"] if args.given("accumulate") else TRUE
    options = (
        ("accumulate", accumulate if isinstance(accumulate, Const) else UNKNOWN),
        ("collective", collective),
        *scale_options(args),
        ("sparse", given(args, "a_sparse_metadata")),
    )
    record(host, PLGPU_API, args, call, options, parameters=("acc", "a", "b"))
    return NONE


@model("plgpu.Barrier", "plgpu.ClusterBarrier", signature="(...)")
def _barrier(host: Host, args: Bound, call: Call) -> Value:
    """`plgpu.Barrier(orders_tensor_core=True)` in scratch: the body gets a barrier ref. Known to
    be a ref (of no dtype), so that a kernel's scratch list with a barrier still binds the other
    refs (`plgpu.tcgen05_mma(acc, a, b, barrier)` needs one)."""
    return Ref(UNKNOWN, UNKNOWN)


@model("plgpu.TMEM", signature="(shape, dtype, *, transforms=(), packed=None, collective=None, layout=None)")
def _tmem(host: Host, args: Bound, call: Call) -> Value:
    """`plgpu.TMEM(shape, dtype, packed=, collective=)` in a kernel's scratch: the body gets a
    TMEM ref of that dtype, laid out by jax's `infer_tmem_layout` (`_src/pallas/mosaic_gpu/
    core.py`): packing `32 // bits` when `packed=True`, 1 when `packed=False` (the default for a
    32-bit dtype; narrower dtypes without `packed=` or `layout=` fail to allocate, and nothing
    is claimed of them). A `layout=` (a `plgpu.TMEMLayout` member) has a packing of its own."""
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = UNKNOWN
    packing: Value = UNKNOWN
    layout = args["layout"] if args.given("layout") else (NONE if args.complete else UNKNOWN)
    packed = args["packed"] if args.given("packed") else (NONE if args.complete else UNKNOWN)
    bits = dtype.info.bits if isinstance(dtype, DType) else None
    if isinstance(layout, TmemLayout) and layout.kind == "default":
        packing = layout.packing
    elif is_none(layout) and isinstance(packed, Const) and bits:
        at = call.origin_of(args.node("packed")) if args.given("packed") else call.origin
        if packed.value is True:
            packing = Const(32 // bits, origin=at)
        elif packed.value is False or (packed.value is None and bits == 32):
            packing = Const(1, origin=at)
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how=TMEM_SCRATCH,
                 packing=packing, collective=tmem_flag(args, "collective", call))
