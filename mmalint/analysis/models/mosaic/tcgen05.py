"""Blackwell's `tcgen05` family in Mosaic GPU: `tcgen05.mma(d, a, b, ...)` over a TMEM
accumulator, A in SMEM or TMEM and B in SMEM, and the `mgpu.TMEM(shape, dtype)` scratch that
allocates the TMEM refs.

Each call is recorded as an `MmaSite` of family "tcgen05" with operands `d`, `a`, `b` and the
options jax reads (swizzles, accumulate, collective, whether block scales were passed); it
returns None, as jax's does: the MMA writes `d` asynchronously.
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite, SiteOperand
from mmalint.analysis.host import Bound, Call, Host, model, trigger
from mmalint.analysis.models.arrays import as_shape_value, is_none, to_dtype
from mmalint.analysis.values import (
    FALSE,
    NONE,
    TRUE,
    UNKNOWN,
    Array,
    Const,
    DType,
    Ref,
    Value,
    as_shape,
)
from mmalint.facts.dtypes import DTYPES

FAMILY = "tcgen05"
ROLES = ("d", "a", "b")
MGPU_API = "mgpu.tcgen05.mma"

# `tcgen05.mma` or `plgpu.tcgen05_mma`: a file without either has no such call (one that imports
# `tcgen05.mma` as `mma` has the warp-level family's word).
trigger(r"tcgen05(?:\.mma|_mma)\b")


def given(args: Bound, name: str) -> Value:
    """Whether an optional ref argument (`a_scale=`) was passed: TRUE, FALSE, or UNKNOWN when
    the value passed may be None."""
    if not args.given(name):
        return FALSE
    value = args[name]
    if is_none(value):
        return FALSE
    return TRUE if value.known else UNKNOWN


def element_type(args: Bound, name: str) -> Value:
    """The MLIR element type of an optional ref argument (`a_scale=` a float8_e8m0fnu TMEM
    ref: "f8E8M0FNU"), UNKNOWN when it is not passed or its dtype is not known."""
    if not args.given(name):
        return UNKNOWN
    value = args[name]
    dtype = value.dtype if isinstance(value, (Ref, Array)) else None
    info = DTYPES.get(dtype.name) if isinstance(dtype, DType) else None
    return Const(info.mlir) if info is not None else UNKNOWN


def _columns(args: Bound, name: str) -> Value:
    """The second dimension of a 2-D ref argument (a scale's K // block), UNKNOWN otherwise."""
    return _dimension(args, name, 1)


def _dimension(args: Bound, name: str, axis: int) -> Value:
    """One dimension of a 2-D ref argument (a scale's rows or columns), UNKNOWN otherwise."""
    if not args.given(name):
        return UNKNOWN
    value = args[name]
    shape = as_shape(value.shape) if isinstance(value, (Ref, Array)) else None
    if shape is None or len(shape) != 2 or shape[axis] is None:
        return UNKNOWN
    return Const(shape[axis])


def scale_options(args: Bound) -> tuple[tuple[str, Value], ...]:
    """Whether each block scale was passed, its element type, and A's scale columns (jax 0.10
    checks them against the block its dtype implies before it checks that dtype for fp8)."""
    return (
        ("a_scale", given(args, "a_scale")),
        ("b_scale", given(args, "b_scale")),
        ("a_scale_type", element_type(args, "a_scale")),
        ("b_scale_type", element_type(args, "b_scale")),
        ("a_scale_columns", _columns(args, "a_scale")),
        # The scales' shapes jax checks after the K and N checks (MMA718, MMA719).
        ("a_scale_rows", _dimension(args, "a_scale", 0)),
        ("b_scale_rows", _dimension(args, "b_scale", 0)),
        ("b_scale_columns", _dimension(args, "b_scale", 1)),
    )


def record(
    host: Host, api: str, args: Bound, call: Call, options: tuple[tuple[str, Value], ...],
    parameters: tuple[str, ...] = ROLES,
) -> None:
    """Record one tcgen05 MMA site: its operands by role (read from `parameters`, the API's
    names for d, a and b), then its options."""
    operands = tuple(
        SiteOperand(role, args[name], call.origin_of(args.node(name)))
        for role, name in zip(ROLES, parameters, strict=True)
    )
    host.record(MmaSite(FAMILY, api, call.origin, operands, host.context, options))


def _option(args: Bound, name: str, default: Value) -> Value:
    value = args[name] if args.given(name) else default
    return value if isinstance(value, Const) else UNKNOWN


@model(
    MGPU_API,
    signature="(d, a, b, *, a_swizzle=128, b_swizzle=128, a_scale=None, b_scale=None,"
    " a_sparse_metadata=None, accumulate=True, collective=False)",
)
def _mma(host: Host, args: Bound, call: Call) -> Value:
    options = (
        ("a_swizzle", _option(args, "a_swizzle", Const(128))),
        ("b_swizzle", _option(args, "b_swizzle", Const(128))),
        ("accumulate", _option(args, "accumulate", TRUE)),
        ("collective", _option(args, "collective", FALSE)),
        *scale_options(args),
        ("sparse", given(args, "a_sparse_metadata")),
    )
    record(host, MGPU_API, args, call, options)
    return NONE


@model("mgpu.TMEM", signature="(shape, dtype, *, layout=None, collective=False, packing=None)")
def _tmem(host: Host, args: Bound, call: Call) -> Value:
    """`mgpu.TMEM((m, n), dtype)` in a kernel's scratch: the body gets a TMEM ref of that dtype."""
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = UNKNOWN
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how="scratch")


@model("mgpu.Barrier", "mgpu.TMABarrier", "mgpu.ClusterBarrier", signature="(...)")
def _barrier(host: Host, args: Bound, call: Call) -> Value:
    """`mgpu.Barrier(1)` / `mgpu.TMABarrier(2)` in scratch: barrier refs, known to be refs (of no
    dtype) so that the scratch list around a TMEM accumulator still binds."""
    return Ref(UNKNOWN, UNKNOWN)
