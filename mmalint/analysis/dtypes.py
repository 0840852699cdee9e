"""Element types as jax, NumPy and MLIR spell them in source: the spellings the analyzer reads
(`jnp.bool_`, `"f4"`, `ir.F32Type`, `jnp.integer`), over the table in `mmalint.facts.dtypes`."""

from __future__ import annotations

from mmalint.facts.dtypes import DTYPES, IR_TYPES, Kind, float_dtype_of_ir_type, int_dtype
from mmalint.facts.dtypes import DType as DTypeInfo
from mmalint.facts.dtypes import IrType as IrTypeInfo

__all__ = [
    "DTYPES", "DTYPE_CLASSES", "IR_TYPES", "IR_TYPE_CLASSES", "DTypeInfo", "IrTypeInfo",
    "dtype_of_ir_type", "lookup_dtype",
]

# Other spellings of the same dtypes: `jnp.bool_`, `np.float_`, `"f4"`, `"i1"`...
_ALIASES: dict[str, str] = {
    "bool_": "bool",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "float_": "float64",
    "int_": "int64",
    "uint": "uint64",
    "byte": "int8",
    "ubyte": "uint8",
    "short": "int16",
    "ushort": "uint16",
    "intc": "int32",
    "uintc": "uint32",
    "longlong": "int64",
    "ulonglong": "uint64",
    "csingle": "complex64",
    "cdouble": "complex128",
    "complex_": "complex128",
    "f2": "float16",
    "f4": "float32",
    "f8": "float64",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "b1": "bool",
    "?": "bool",
    "c8": "complex64",
    "c16": "complex128",
}

# Abstract dtype classes usable with `jnp.issubdtype`.
DTYPE_CLASSES: dict[str, frozenset[Kind]] = {
    "generic": frozenset({"int", "uint", "bool", "float", "complex"}),
    "number": frozenset({"int", "uint", "float", "complex"}),
    "integer": frozenset({"int", "uint"}),
    "signedinteger": frozenset({"int"}),
    "unsignedinteger": frozenset({"uint"}),
    "inexact": frozenset({"float", "complex"}),
    "floating": frozenset({"float"}),
    "complexfloating": frozenset({"complex"}),
}


def lookup_dtype(name: str) -> DTypeInfo | None:
    """The dtype a jnp/np attribute name or dtype string denotes, or None."""
    canonical = _ALIASES.get(name, name)
    return DTYPES.get(canonical)


# `ir.F32Type.get()` and friends: the MLIR Python class name -> element type.
IR_TYPE_CLASSES: dict[str, str] = {
    "F16Type": "f16",
    "BF16Type": "bf16",
    "F32Type": "f32",
    "F64Type": "f64",
    "FloatTF32Type": "tf32",
    "Float8E4M3FNType": "f8E4M3FN",
    "Float8E5M2Type": "f8E5M2",
    "Float8E4M3FNUZType": "f8E4M3FNUZ",
    "Float8E5M2FNUZType": "f8E5M2FNUZ",
    "Float8E4M3B11FNUZType": "f8E4M3B11FNUZ",
    "Float8E4M3Type": "f8E4M3",
    "Float8E3M4Type": "f8E3M4",
    "Float8E8M0FNUType": "f8E8M0FNU",
    "Float4E2M1FNType": "f4E2M1FN",
    "IndexType": "index",
}


def dtype_of_ir_type(ir_name: str, is_signed: bool | None) -> str | None:
    """The NumPy dtype a (MLIR type, is_signed) pair stands for, or None when not decidable."""
    info = IR_TYPES.get(ir_name)
    if info is None:
        return None
    if info.kind == "float":
        return float_dtype_of_ir_type(ir_name)
    if ir_name == "i1":
        return "bool"
    if is_signed is None:
        return None
    return int_dtype(info.bits, is_signed)
