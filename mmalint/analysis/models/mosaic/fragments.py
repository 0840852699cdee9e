"""`mgpu.FragmentedArray`: register arrays with an element type, signedness, layout and shape."""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.host import (
    Bound,
    Call,
    Host,
    ModelFn,
    attribute,
    binary,
    method,
    model,
    subscript,
    value_kinds,
)
from mmalint.analysis.models.arrays import (
    as_shape_value,
    index_shape,
    is_full_index,
    is_none,
    load_view,
    signed_arg,
    untiled_shape,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    DType,
    Fragment,
    IrType,
    IrValue,
    Layout,
    Method,
    Ref,
    Registers,
    Value,
)


@model("mgpu.FragmentedArray", signature="(*, _registers, _layout, _is_signed)")
def _fragment_ctor(host: Host, args: Bound, call: Call) -> Value:
    registers = args["_registers"]
    return Fragment(
        registers.ir_type if isinstance(registers, Registers) else UNKNOWN,
        args["_is_signed"],
        args["_layout"],
        UNKNOWN,
        UNKNOWN,
        created=call.origin,
        how="built",
    )


def _load(layout_default: Layout | None, tiled: bool = False) -> ModelFn:
    def load(host: Host, args: Bound, call: Call) -> Value:
        ref = args["ref"]
        if args.given("layout"):
            layout = args["layout"]
        else:
            layout = layout_default if layout_default is not None and args.complete else UNKNOWN
        dtype = ref.dtype if isinstance(ref, Ref) else UNKNOWN
        ir_type: Value = UNKNOWN
        if isinstance(dtype, DType):
            ir_type = IrType(dtype.info.mlir, origin=dtype.origin)
        shape: Value = UNKNOWN
        view: str | None = None
        if isinstance(ref, Ref):
            shape = untiled_shape(ref.shape) if tiled else ref.shape
            if not tiled:
                view = load_view(ref, args)
        return Fragment(ir_type, signed_arg(args, "is_signed", call), layout, shape, dtype,
                        created=call.origin, how="loaded", view=view)

    return load


_LOAD = "(ref, ..., *, layout, is_signed, optimized)"
model("mgpu.FragmentedArray.load_untiled", signature=_LOAD)(_load(None))
model("mgpu.FragmentedArray.load_tiled", signature=_LOAD)(
    _load(Layout("mma_acc", None, 4, name="WGMMA_LAYOUT"), tiled=True)
)
model("mgpu.FragmentedArray.load_strided", signature=_LOAD)(_load(Layout("strided")))


@model("mgpu.FragmentedArray.splat", signature="(value, shape, layout=None, *, is_signed)")
def _splat(host: Host, args: Bound, call: Call) -> Value:
    value = args["value"]
    ir_type = value.type if isinstance(value, IrValue) else UNKNOWN
    layout = args["layout"]
    if is_none(layout):
        layout = Layout("splat")
    return Fragment(ir_type, signed_arg(args, "is_signed", call), layout, as_shape_value(args["shape"]),
                    UNKNOWN, created=call.origin, how="splatted")


@model("mgpu.FragmentedArray.broadcasted_iota", signature="(dtype, shape, dimension, layout=None, *, is_signed)")
def _iota(host: Host, args: Bound, call: Call) -> Value:
    layout = args["layout"]
    return Fragment(args["dtype"], signed_arg(args, "is_signed", call),
                    Layout("splat") if is_none(layout) else layout, as_shape_value(args["shape"]),
                    UNKNOWN, created=call.origin, how="built")


@attribute(Fragment)
def _fragment_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, Fragment)
    if attr == "mlir_dtype":
        return value.ir_type
    if attr == "is_signed":
        return value.signed
    if attr == "layout":
        return value.layout
    if attr == "shape":
        return value.shape
    if attr == "registers":
        return Registers(value.ir_type)
    return Method(value, attr)


@method(Fragment, "astype", signature="(new_dtype, *, is_signed)")
def _astype(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(args["new_dtype"], signed_arg(args, "is_signed", call), frag.layout, frag.shape,
                    UNKNOWN, created=call.origin, how="converted")


@method(Fragment, "to_layout", signature="(new_layout)")
def _to_layout(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, args["new_layout"], frag.shape, frag.data_dtype,
                    created=frag.created, how=frag.how, converted_from=frag.layout,
                    converted_at=call.origin)


@method(Fragment, "bitcast", signature="(elt, *, output_is_signed)")
def _bitcast(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(args["elt"], signed_arg(args, "output_is_signed", call), frag.layout, UNKNOWN,
                    UNKNOWN, created=call.origin, how="bitcast")


@method(Fragment, "copy", signature="(...)")
def _copy(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    return frag


@method(Fragment, "reshape", "broadcast", "broadcast_minor", "broadcast_in_dim", "transpose",
        signature="(...)")
def _reshape(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, UNKNOWN, UNKNOWN, frag.data_dtype,
                    created=frag.created, how=frag.how)


@method(Fragment, "foreach", signature="(...)", prefix="store")
def _store(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    return NONE


@subscript(Fragment)
def _fragment_subscript(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    assert isinstance(value, Fragment)
    full = is_full_index(index)
    return Fragment(value.ir_type, value.signed, value.layout if full else UNKNOWN,
                    index_shape(value.shape, index), value.data_dtype, created=value.created,
                    how=value.how)


@binary(Fragment, precedence=1)  # `frag * array` is a fragment
def _fragment_binary(op: str, left: Value, right: Value) -> Value:
    frag = left if isinstance(left, Fragment) else right
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, frag.layout, frag.shape, UNKNOWN, created=frag.created,
                    how=frag.how)


value_kinds(Fragment, truthy=True, unary_keeps=True)
