"""Element types as jax, NumPy and MLIR spell them, and the facts the rules need about them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mmalint.dtype_table import ELEMENT_TYPES, Kind


@dataclass(frozen=True)
class DTypeInfo:
    """One NumPy-style dtype (what `jnp.int8` or `np.dtype("int8")` denotes)."""

    name: str
    kind: Kind
    bits: int
    mlir: str  # what `utils.dtype_to_ir_type` gives: integers are signless

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"

    @property
    def is_signed(self) -> bool | None:
        """`utils.is_signed(dtype)`: bool is False, signed ints True, unsigned False, floats None."""
        if self.kind == "int":
            return True
        if self.kind in ("uint", "bool"):
            return False
        return None


_TABLE: tuple[DTypeInfo, ...] = tuple(DTypeInfo(*row) for row in ELEMENT_TYPES)

DTYPES: dict[str, DTypeInfo] = {d.name: d for d in _TABLE}

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


@dataclass(frozen=True)
class IrTypeInfo:
    """An MLIR element type (`ir.IntegerType.get_signless(8)` is `i8`)."""

    name: str
    kind: Literal["int", "float", "index"]
    bits: int

    @property
    def is_integer(self) -> bool:
        return self.kind == "int"

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"


_IR_TABLE: tuple[IrTypeInfo, ...] = (
    IrTypeInfo("i1", "int", 1),
    IrTypeInfo("i2", "int", 2),
    IrTypeInfo("i4", "int", 4),
    IrTypeInfo("i8", "int", 8),
    IrTypeInfo("i16", "int", 16),
    IrTypeInfo("i32", "int", 32),
    IrTypeInfo("i64", "int", 64),
    IrTypeInfo("bf16", "float", 16),
    IrTypeInfo("f16", "float", 16),
    IrTypeInfo("f32", "float", 32),
    IrTypeInfo("tf32", "float", 32),
    IrTypeInfo("f64", "float", 64),
    IrTypeInfo("f8E4M3FN", "float", 8),
    IrTypeInfo("f8E5M2", "float", 8),
    IrTypeInfo("f8E4M3FNUZ", "float", 8),
    IrTypeInfo("f8E5M2FNUZ", "float", 8),
    IrTypeInfo("f8E4M3B11FNUZ", "float", 8),
    IrTypeInfo("f8E4M3", "float", 8),
    IrTypeInfo("f8E3M4", "float", 8),
    IrTypeInfo("f8E8M0FNU", "float", 8),
    IrTypeInfo("f4E2M1FN", "float", 4),
    IrTypeInfo("index", "index", 64),
)

IR_TYPES: dict[str, IrTypeInfo] = {t.name: t for t in _IR_TABLE}

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


def ir_type_of_dtype(name: str) -> str | None:
    """`utils.dtype_to_ir_type`: the signless MLIR type of a dtype name."""
    info = DTYPES.get(name)
    return info.mlir if info is not None else None


def dtype_of_ir_type(ir_name: str, is_signed: bool | None) -> str | None:
    """The NumPy dtype a (MLIR type, is_signed) pair stands for, or None when not decidable."""
    info = IR_TYPES.get(ir_name)
    if info is None:
        return None
    if info.kind == "float":
        for d in _TABLE:
            if d.mlir == ir_name and d.kind == "float":
                return d.name
        return None
    if ir_name == "i1":
        return "bool"
    if is_signed is None:
        return None
    prefix = "int" if is_signed else "uint"
    return f"{prefix}{info.bits}" if f"{prefix}{info.bits}" in DTYPES else None
