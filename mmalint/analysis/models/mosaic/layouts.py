"""Mosaic GPU register layouts: `MMALayouts`, the WGMMA layouts, strided and splat layouts."""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import (
    Bound,
    Call,
    Host,
    Resolver,
    attribute,
    model,
    record_use,
    resolver,
    trigger,
    value_kinds,
)
from mmalint.analysis.models.arrays import agreed, to_dtype
from mmalint.analysis.values import (
    UNKNOWN,
    Const,
    DType,
    IrType,
    Layout,
    LayoutKind,
    MMALayoutsVal,
    Value,
    as_int,
)

# `MMALayouts` only matters on the way to an MMA call, but its uses are checked (MMA501).
trigger("MMALayouts")

NAMED_LAYOUTS: dict[str, tuple[LayoutKind, int | None, int | None]] = {
    # WGMMA_LAYOUT is the m_warps=4 MMA accumulator layout (jax compares them equal).
    "mgpu.WGMMA_LAYOUT": ("mma_acc", None, 4),
    "mgpu.WGMMA_LAYOUT_8BIT": ("wgmma_8bit", 8, None),
}


def named_layout(table: dict[str, tuple[LayoutKind, int | None, int | None]]) -> Resolver:
    def resolve(name: str) -> Value | None:
        found = table.get(name)
        if found is None:
            return None
        kind, bits, m_warps = found
        return Layout(kind, bits, m_warps, name=name.split(".", 1)[1])

    return resolve


resolver("mgpu.WGMMA_LAYOUT")(named_layout(NAMED_LAYOUTS))


def element_bits(element: Value) -> tuple[Value, str | None]:
    """The bit width of an element type given as an `ir` type or a dtype, and how it was given."""
    if isinstance(element, IrType):
        return Const(element.info.bits), "ir"
    d = to_dtype(element)
    if isinstance(d, DType):
        return Const(d.info.bits), "dtype"
    bits = agreed(d, lambda i: i.bits)  # one of several dtypes of one width
    return (UNKNOWN, None) if bits is None else (Const(bits), "dtype")


@model("mgpu.MMALayouts", signature="(element_type, m_warps=4, ...)")
def _mma_layouts(host: Host, args: Bound, call: Call) -> Value:
    bits, form = element_bits(args["element_type"])
    m_warps_origin = call.origin_of(args.node("m_warps"))
    record_use(host, "mgpu.MMALayouts", args, call, as_int(bits), form)
    return MMALayoutsVal(bits, args["m_warps"], m_warps_origin, origin=call.origin)


@model("mgpu.MMALayouts.for_shape", signature="(element_type, m, n, ...)")
def _mma_layouts_for_shape(host: Host, args: Bound, call: Call) -> Value:
    record_use(host, "mgpu.MMALayouts.for_shape", args, call)
    bits, _ = element_bits(args["element_type"])
    m = as_int(args["m"])
    n = as_int(args["n"])
    if m is None or n is None:
        return MMALayoutsVal(bits, UNKNOWN, origin=call.origin)
    for m_warps in (4, 2, 1):
        if m % (m_warps * 16) == 0 and n % ((4 // m_warps) * 8) == 0:
            return MMALayoutsVal(bits, Const(m_warps), origin=call.origin)
    return MMALayoutsVal(bits, UNKNOWN, origin=call.origin)


@model("mgpu.WGStridedFragLayout", "mgpu.WGStridedFragLayout.from_shaped_type", signature="(...)")
def _strided(host: Host, args: Bound, call: Call) -> Value:
    return Layout("strided")


@model("mgpu.WGSplatFragLayout", signature="(...)")
def _splat(host: Host, args: Bound, call: Call) -> Value:
    return Layout("splat")


@model("mgpu.TiledLayout", signature="(...)")
def _tiled(host: Host, args: Bound, call: Call) -> Value:
    return Layout("other")


_ROLES: dict[str, LayoutKind] = {"lhs": "mma_lhs", "rhs": "mma_rhs", "acc": "mma_acc"}


@attribute(MMALayoutsVal)
def _mma_layouts_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, MMALayoutsVal)
    if attr not in _ROLES:
        return UNKNOWN
    return Layout(
        _ROLES[attr],
        as_int(value.bits) if attr != "acc" else None,
        as_int(value.m_warps),
        name=f"MMALayouts.{attr}",
        built=value.origin,
        m_warps_origin=value.m_warps_origin,
    )


def _layout_equal(left: Value, right: Value) -> bool | None:
    # A layout whose bit width or warp count is not known may be any of its kind.
    if (
        isinstance(left, Layout)
        and isinstance(right, Layout)
        and left.kind == right.kind
        and None in (left.bits, right.bits, left.m_warps, right.m_warps)
    ):
        return None
    return NotImplemented


value_kinds(Layout, truthy=True, equality=_layout_equal)
value_kinds(MMALayoutsVal, truthy=True)
