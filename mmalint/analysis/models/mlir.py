"""MLIR's Python bindings (`ir`, `arith`) and Mosaic GPU's element-type helpers (`mgpu.utils`).

An `ir` element type is an `IrType`; a value built from one (`arith.constant`, `utils.c`) is
an `IrValue` of that type.
"""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.dtypes import IR_TYPE_CLASSES, IR_TYPES
from mmalint.analysis.host import (
    Bound,
    Call,
    Host,
    Model,
    ModelFn,
    Signature,
    attribute,
    class_check,
    model,
    pattern,
    value_kinds,
)
from mmalint.analysis.models.arrays import agreed, to_dtype
from mmalint.analysis.values import UNKNOWN, Const, DType, IrType, IrValue, Value, as_int


@class_check("ir.")
def ir_isinstance(obj: Value, cls: str) -> Value:
    """`isinstance(t, ir.IntegerType)`, `ir.F32Type.isinstance(t)`."""
    if not isinstance(obj, IrType):
        return UNKNOWN
    info = obj.info
    if cls == "IntegerType":
        return Const(info.kind == "int")
    if cls == "FloatType":
        return Const(info.kind == "float")
    if cls in IR_TYPE_CLASSES:
        return Const(IR_TYPE_CLASSES[cls] == obj.name)
    return UNKNOWN


_ANY = Signature.parse("(...)")
_ISINSTANCE = Signature.parse("(other)")
_CAST = Signature.parse("(cast_from)")
_CASTS = frozenset((*IR_TYPE_CLASSES, "IntegerType", "FloatType", "Type"))


@pattern("ir.")
def _ir_class_api(name: str) -> Model | None:
    """`ir.F32Type.get()`, `ir.Float8E4M3FNType.isinstance(t)`, `ir.IntegerType(t)` (a cast:
    the type is unchanged)."""
    if name.endswith(".get") and name[3:-4] in IR_TYPE_CLASSES:
        return Model(_type_getter(IR_TYPE_CLASSES[name[3:-4]]), _ANY)
    if name.endswith(".isinstance"):
        cls = name[3:-11]
        return Model(lambda host, args, call: ir_isinstance(args["other"], cls), _ISINSTANCE)
    if name[3:] in _CASTS:
        return Model(lambda host, args, call: args["cast_from"], _CAST)
    return None


def _type_getter(ir_name: str) -> ModelFn:
    return lambda host, args, call: IrType(ir_name)


@model("ir.IntegerType.get_signless", signature="(width, ...)")
def _integer_type(host: Host, args: Bound, call: Call) -> Value:
    width = as_int(args["width"])
    if width is None or f"i{width}" not in IR_TYPES:
        return UNKNOWN
    return IrType(f"i{width}")


@model("mgpu.utils.dtype_to_ir_type", "jax.mlir.dtype_to_ir_type", signature="(dtype, ...)")
def _dtype_to_ir_type(host: Host, args: Bound, call: Call) -> Value:
    d = to_dtype(args["dtype"])
    if not isinstance(d, DType):
        # One of several dtypes of one MLIR type (int8 or uint8: i8) is that type.
        mlir = agreed(d, lambda i: i.mlir)
        return UNKNOWN if mlir is None else IrType(mlir)
    # The type inherits where the dtype was decided: that is where a fix belongs.
    return IrType(d.info.mlir, origin=d.origin)


@model("mgpu.utils.is_signed", signature="(dtype)")
def _is_signed(host: Host, args: Bound, call: Call) -> Value:
    # A set of dtypes that agree (int8 or int16: True) answers too; floats agree on None.
    signed = agreed(args["dtype"], lambda i: (i.is_signed,))
    return UNKNOWN if signed is None else Const(signed[0], origin=call.origin)


@model("mgpu.utils.bitwidth", signature="(ty)")
def _bitwidth(host: Host, args: Bound, call: Call) -> Value:
    t = args["ty"]
    return Const(t.info.bits) if isinstance(t, IrType) else UNKNOWN


@model("mgpu.utils.bytewidth", signature="(ty)")
def _bytewidth(host: Host, args: Bound, call: Call) -> Value:
    t = args["ty"]
    return Const(max(t.info.bits // 8, 1)) if isinstance(t, IrType) else UNKNOWN


def _constant(host: Host, t: Value, call: Call) -> Value:
    return IrValue(t if isinstance(t, IrType) else UNKNOWN, origin=call.origin)


@model("mgpu.utils.c", signature="(value, ty)")
def _c(host: Host, args: Bound, call: Call) -> Value:
    return _constant(host, args["ty"], call)


@model("arith.constant", signature="(result, value)")
def _arith_constant(host: Host, args: Bound, call: Call) -> Value:
    return _constant(host, args["result"], call)


@attribute(IrType)
def _ir_type_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, IrType)
    return Const(value.info.bits) if attr == "width" else UNKNOWN


@attribute(IrValue)
def _ir_value_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, IrValue)
    return value.type if attr == "type" else UNKNOWN


value_kinds(IrType, truthy=True, equality=True)
value_kinds(IrValue, truthy=True)
