"""Blackwell's `tcgen05` family in Mosaic GPU: `tcgen05.mma(d, a, b, ...)` over a TMEM
accumulator, A in SMEM or TMEM and B in SMEM, and the `mgpu.TMEM(shape, dtype)` scratch that
allocates the TMEM refs.

Each call is recorded as an `MmaSite` of family "tcgen05" with operands `d`, `a`, `b` and the
options jax reads (swizzles, accumulate, collective, whether block scales were passed); it
returns None, as jax's does: the MMA writes `d` asynchronously.
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite, SiteOperand
from mmalint.analysis.dtypes import dtype_of_ir_type
from mmalint.analysis.host import Bound, Call, Host, method, model, trigger
from mmalint.analysis.models.arrays import (
    TMEM_SCRATCH,
    as_shape_value,
    index_shape,
    is_none,
    to_dtype,
)
from mmalint.analysis.values import (
    FALSE,
    NONE,
    TRUE,
    UNKNOWN,
    Array,
    Const,
    DType,
    IrType,
    Ref,
    TmemLayout,
    TupleVal,
    Value,
    as_int,
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
    """`mgpu.TMEM((m, n), dtype, packing=, layout=)` in a kernel's scratch: the body gets a TMEM
    ref of that dtype (`tcgen05.TMEMRef`), laid out with the packing given, the packing of the
    `layout=` given, or 1: jax does not derive it from the dtype (`core.py`, v10:525 v11:521
    v12:612, Lane semantics)."""
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = UNKNOWN
    packing = _layout_packing(args, call, "packing")
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how=TMEM_SCRATCH,
                 packing=packing, collective=tmem_flag(args, "collective", call))


def tmem_flag(args: Bound, name: str, call: Call) -> Value:
    """A TMEM allocation's boolean option (`collective=`): its Const when written, False when
    not passed (for both APIs None and False mean the same), UNKNOWN otherwise."""
    if args.given(name):
        value = args[name]
        if isinstance(value, Const) and value.value in (True, False, None):
            return Const(bool(value.value), origin=call.origin_of(args.node(name)))
        return UNKNOWN
    return Const(False, origin=call.origin) if args.complete else UNKNOWN


def _layout_packing(args: Bound, call: Call, packing_name: str | None) -> Value:
    """The packing of a raw TMEM ref's layout: that of a default-kind `layout=`, else the
    `packing=` given (when the API has one), else 1; UNKNOWN for any other layout or value."""
    layout = args["layout"] if args.given("layout") else (NONE if args.complete else UNKNOWN)
    if isinstance(layout, TmemLayout):
        return layout.packing if layout.kind == "default" else UNKNOWN
    if not is_none(layout):
        return UNKNOWN
    if packing_name is not None and args.given(packing_name):
        value = args[packing_name]
        if is_none(value):
            return Const(1, origin=call.origin_of(args.node(packing_name)))
        known = as_int(value)
        return Const(known, origin=call.origin_of(args.node(packing_name))) if known is not None else UNKNOWN
    return Const(1, origin=call.origin) if args.complete else UNKNOWN


@model("mgpu.tcgen05.tmem_default_layout", signature="(packing=1)")
def _tmem_default_layout(host: Host, args: Bound, call: Call) -> Value:
    """`tcgen05.tmem_default_layout(packing)`: the layout of a 128-row TMEM ref."""
    known = as_int(args["packing"])
    at = call.origin_of(args.node("packing")) if args.given("packing") else call.origin
    return TmemLayout("default", Const(known, origin=at) if known is not None else UNKNOWN)


@model("mgpu.tcgen05.tmem_half_lane_layout", "mgpu.tcgen05.tmem_m64_collective_layout",
       "mgpu.tcgen05.scales_layout", "mgpu.tcgen05.sparse_meta_layout", signature="(...)")
def _other_tmem_layout(host: Host, args: Bound, call: Call) -> Value:
    """The TMEM layouts of 64-row refs, block scales and sparsity metadata."""
    return TmemLayout("other")


def _ref_dtype(value: Value) -> Value:
    """A TMEMRef's dtype, given as a dtype or as an MLIR type (`ir.BF16Type.get()`: a float
    type names its dtype; an integer one does not say its signedness)."""
    if isinstance(value, IrType):
        name = dtype_of_ir_type(value.name, None)
        return DType(name, origin=value.origin) if name is not None else UNKNOWN
    dtype = to_dtype(value)
    return dtype if isinstance(dtype, DType) else UNKNOWN


@model("mgpu.tcgen05.TMEMRef", signature="(address, shape, dtype, layout)")
def _tmem_ref(host: Host, args: Bound, call: Call) -> Value:
    """`tcgen05.TMEMRef(address, shape, dtype, layout)`: a TMEM ref built by hand."""
    return _built_tmem_ref(args, call, UNKNOWN)


@model("mgpu.tcgen05.TMEMRef.from_alloc", signature="(tmem_addr_ref, shape, dtype, collective=None, layout=None)")
def _tmem_ref_from_alloc(host: Host, args: Bound, call: Call) -> Value:
    """`TMEMRef.from_alloc(addr_ref, shape, dtype, collective=, layout=)`: packing 1 unless a
    layout is given (`_infer_tmem_layout(shape, collective, packing=1)`). Without either jax
    raises ("collective argument must be provided when TMEM layout is inferred"): no ref."""
    layout_given = args.given("layout") and not is_none(args["layout"])
    collective_given = args.given("collective") and not is_none(args["collective"])
    if not (layout_given or collective_given):
        return UNKNOWN
    return _built_tmem_ref(args, call, tmem_flag(args, "collective", call))


def _built_tmem_ref(args: Bound, call: Call, collective: Value) -> Value:
    return Ref(_ref_dtype(args["dtype"]), as_shape_value(args["shape"]), origin=call.origin, space="tmem",
               packing=_layout_packing(args, call, None), collective=collective)


@method(Ref, "slice", signature="(*idxs)")
def _tmem_slice(host: Host, receiver: Value, args: Bound, call: Call) -> Value:
    """`tmem_ref.slice(slice(None), ds(0, k))`: a TMEM ref of the columns sliced, in the same
    layout (jax slices TMEM along columns only)."""
    assert isinstance(receiver, Ref)
    if receiver.space != "tmem":
        return UNKNOWN
    index = TupleVal(tuple(args.positional)) if len(args.positional) != 1 else args.positional[0]
    shape = index_shape(receiver.shape, index) if args.complete else UNKNOWN
    return Ref(receiver.dtype, shape, origin=receiver.origin, space="tmem", packing=receiver.packing,
               collective=receiver.collective)


@model("mgpu.Barrier", "mgpu.TMABarrier", "mgpu.ClusterBarrier", signature="(...)")
def _barrier(host: Host, args: Bound, call: Call) -> Value:
    """`mgpu.Barrier(1)` / `mgpu.TMABarrier(2)` in scratch: barrier refs, known to be refs (of no
    dtype) so that the scratch list around a TMEM accumulator still binds."""
    return Ref(UNKNOWN, UNKNOWN)
