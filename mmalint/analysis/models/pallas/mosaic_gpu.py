"""Pallas's Mosaic GPU backend (`plgpu`): layouts, loads, layout casts, compiler parameters and
lowering semantics."""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import (
    Bound,
    Call,
    Host,
    Model,
    Signature,
    attribute,
    method,
    model,
    pattern,
    record_use,
    resolver,
    trigger,
    value_kinds,
)
from mmalint.analysis.models.arrays import agreed, index_shape, is_none, load_view
from mmalint.analysis.models.mosaic.layouts import named_layout
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Array,
    BlockSpecVal,
    CompilerParams,
    Layout,
    LayoutKind,
    Ref,
    Semantics,
    Unknown,
    Value,
    as_int,
)

# `plgpu.Layout.MMA_LHS(dtype)` and its kin only matter on the way to an MMA call.
trigger("MMA_(?:LHS|RHS|ACC)")

resolver("plgpu.Layout.WGMMA")(
    named_layout(
        {"plgpu.Layout.WGMMA": ("mma_acc", None, 4), "plgpu.Layout.WGMMA_8BIT": ("wgmma_8bit", 8, None)}
    )
)

_SEMANTICS = {"Lane": "lane", "Warpgroup": "warpgroup"}


def _semantics(name: str) -> Value | None:
    member = name.rsplit(".", 1)[1]
    return Semantics(_SEMANTICS[member]) if member in _SEMANTICS else None


resolver("plgpu.LoweringSemantics.")(_semantics)
resolver("mgpu.LoweringSemantics.")(_semantics)

_MMA_MEMBERS: dict[str, LayoutKind] = {"MMA_LHS": "mma_lhs", "MMA_RHS": "mma_rhs", "MMA_ACC": "mma_acc"}
_MMA_LAYOUT = Signature.parse("(dtype, m_warps=4, ...)")
_ANY = Signature.parse("(...)")


@pattern("plgpu.Layout.")
def _layout_member(name: str) -> Model | None:
    """`plgpu.Layout.MMA_LHS(dtype)`, `plgpu.Layout.WG_STRIDED(...)`..."""
    member = name[len("plgpu.Layout.") :]
    if member not in _MMA_MEMBERS:

        def layout(host: Host, args: Bound, call: Call) -> Value:
            if member.startswith("MMA_"):  # a member some jax version may add (MMA501)
                record_use(host, name, args, call)
            return _plain_layout(member)

        return Model(layout, _ANY)

    def mma_layout(host: Host, args: Bound, call: Call) -> Value:
        record_use(host, name, args, call)
        bits = agreed(args["dtype"], lambda i: i.bits)
        return Layout(
            _MMA_MEMBERS[member],
            bits if member != "MMA_ACC" else None,
            as_int(args["m_warps"]),
            name=f"Layout.{member}",
            built=call.origin,
            m_warps_origin=call.origin_of(args.node("m_warps")),
        )

    return Model(mma_layout, _MMA_LAYOUT)


def _plain_layout(member: str) -> Value:
    if member == "WG_SPLAT":
        return Layout("splat", name="Layout.WG_SPLAT")
    if member == "WG_STRIDED":
        return Layout("strided", name="Layout.WG_STRIDED")
    return Layout("other", name=f"Layout.{member}")


@model("plgpu.layout_cast", signature="(x, new_layout)")
def _layout_cast(host: Host, args: Bound, call: Call) -> Value:
    x = args["x"]
    layout = args["new_layout"]
    if isinstance(x, Array):
        return Array(x.dtype, x.shape, layout, created=x.created, how=x.how, converted_from=x.layout,
                     converted_at=call.origin)
    return Array(UNKNOWN, UNKNOWN, layout, created=call.origin, how="cast")


@model("plgpu.load", signature="(src, idx, ..., *, layout, optimized)")
def _load(host: Host, args: Bound, call: Call) -> Value:
    ref = args["src"]
    layout = args["layout"] if args.given("layout") else (NONE if args.complete else UNKNOWN)
    if is_none(layout):
        layout = UNKNOWN
    if not isinstance(ref, Ref):
        return Array(UNKNOWN, UNKNOWN, layout, created=call.origin, how="loaded")
    indexed = args.given("idx") and not is_none(args["idx"])
    shape = index_shape(ref.shape, args["idx"]) if indexed else ref.shape
    view = None if indexed else load_view(ref, args)
    return Array(ref.dtype, shape, layout, created=call.origin, how="loaded", view=view)


@model("plgpu.CompilerParams", signature="(..., *, lowering_semantics)")
def _compiler_params(host: Host, args: Bound, call: Call) -> Value:
    if args.given("lowering_semantics"):
        return CompilerParams(args["lowering_semantics"])
    # The default changed: Lane in jax 0.10, Warpgroup from 0.11 (`32915de40f`).
    return CompilerParams(Semantics("default", origin=call.origin) if args.complete else UNKNOWN)


@method(CompilerParams, "__replace__", signature="(..., *, lowering_semantics)")
@method(Unknown, "__replace__", signature="(..., *, lowering_semantics)")
def _replace(host: Host, obj: Value, args: Bound, call: Call) -> Value:
    """`dataclasses.replace(params, lowering_semantics=...)` of compiler parameters (of
    parameters not known, when the change names the semantics)."""
    if isinstance(obj, CompilerParams) or args.given("lowering_semantics"):
        if args.given("lowering_semantics"):
            return CompilerParams(args["lowering_semantics"])
        return CompilerParams(obj.semantics if isinstance(obj, CompilerParams) else UNKNOWN)
    return UNKNOWN


@attribute(CompilerParams)
def _params_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, CompilerParams)
    return value.semantics if attr == "lowering_semantics" else UNKNOWN


@attribute(BlockSpecVal)
def _spec_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, BlockSpecVal)
    return value.block_shape if attr == "block_shape" else UNKNOWN


def _same_semantics(left: Value, right: Value) -> bool | None:
    assert isinstance(left, Semantics) and isinstance(right, Semantics)
    return left.name == right.name


value_kinds(Semantics, truthy=True, equality=True, identity=_same_semantics)
value_kinds(CompilerParams, truthy=True)
