"""Element types: the NumPy name, its kind, bit width and signedness, and the MLIR type
`utils.dtype_to_ir_type` gives for it (integers are signless); and the MLIR element types
themselves, which Mosaic GPU compares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["int", "uint", "bool", "float", "complex"]

# (name, kind, bits, MLIR element type)
ELEMENT_TYPES: tuple[tuple[str, Kind, int, str], ...] = (
    ("bool", "bool", 1, "i1"),
    ("int2", "int", 2, "i2"),
    ("uint2", "uint", 2, "i2"),
    ("int4", "int", 4, "i4"),
    ("uint4", "uint", 4, "i4"),
    ("int8", "int", 8, "i8"),
    ("uint8", "uint", 8, "i8"),
    ("int16", "int", 16, "i16"),
    ("uint16", "uint", 16, "i16"),
    ("int32", "int", 32, "i32"),
    ("uint32", "uint", 32, "i32"),
    ("int64", "int", 64, "i64"),
    ("uint64", "uint", 64, "i64"),
    ("bfloat16", "float", 16, "bf16"),
    ("float16", "float", 16, "f16"),
    ("float32", "float", 32, "f32"),
    ("float64", "float", 64, "f64"),
    ("float8_e4m3fn", "float", 8, "f8E4M3FN"),
    ("float8_e5m2", "float", 8, "f8E5M2"),
    ("float8_e4m3fnuz", "float", 8, "f8E4M3FNUZ"),
    ("float8_e5m2fnuz", "float", 8, "f8E5M2FNUZ"),
    ("float8_e4m3b11fnuz", "float", 8, "f8E4M3B11FNUZ"),
    ("float8_e4m3", "float", 8, "f8E4M3"),
    ("float8_e3m4", "float", 8, "f8E3M4"),
    ("float8_e8m0fnu", "float", 8, "f8E8M0FNU"),
    ("float4_e2m1fn", "float", 4, "f4E2M1FN"),
    ("complex64", "complex", 64, "complex<f32>"),
    ("complex128", "complex", 128, "complex<f64>"),
)


@dataclass(frozen=True)
class DType:
    """One NumPy-style dtype (what `jnp.int8` or `np.dtype("int8")` denotes)."""

    name: str
    kind: Kind
    bits: int
    mlir: str  # what `utils.dtype_to_ir_type` gives: integers are signless

    @property
    def is_integer(self) -> bool:
        """`jnp.issubdtype(dtype, jnp.integer)`: bool is not an integer to NumPy (it is `i1`,
        an integer, to MLIR: see `IrType.is_integer`)."""
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

    @property
    def signedness(self) -> str:
        """`is_signed` as the JSON `signedness` field spells it: signed, unsigned or signless."""
        signed = self.is_signed
        return "signless" if signed is None else ("signed" if signed else "unsigned")


DTYPES: dict[str, DType] = {d.name: d for d in (DType(*row) for row in ELEMENT_TYPES)}

IrKind = Literal["int", "float", "index"]

# (name, kind, bits): the MLIR element types as jax prints them.
IR_ELEMENT_TYPES: tuple[tuple[str, IrKind, int], ...] = (
    ("i1", "int", 1),
    ("i2", "int", 2),
    ("i4", "int", 4),
    ("i8", "int", 8),
    ("i16", "int", 16),
    ("i32", "int", 32),
    ("i64", "int", 64),
    ("bf16", "float", 16),
    ("f16", "float", 16),
    ("f32", "float", 32),
    ("tf32", "float", 32),
    ("f64", "float", 64),
    ("f8E4M3FN", "float", 8),
    ("f8E5M2", "float", 8),
    ("f8E4M3FNUZ", "float", 8),
    ("f8E5M2FNUZ", "float", 8),
    ("f8E4M3B11FNUZ", "float", 8),
    ("f8E4M3", "float", 8),
    ("f8E3M4", "float", 8),
    ("f8E8M0FNU", "float", 8),
    ("f4E2M1FN", "float", 4),
    ("index", "index", 64),
)


@dataclass(frozen=True)
class IrType:
    """An MLIR element type (`ir.IntegerType.get_signless(8)` is `i8`)."""

    name: str
    kind: IrKind
    bits: int

    @property
    def is_integer(self) -> bool:
        """An `ir.IntegerType`, `i1` included: what Mosaic GPU's `is_integer` checks."""
        return self.kind == "int"

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"


IR_TYPES: dict[str, IrType] = {t.name: t for t in (IrType(*row) for row in IR_ELEMENT_TYPES)}


def float_dtype_of_ir_type(ir_name: str) -> str | None:
    """The NumPy float dtype whose MLIR type is `ir_name` (`bf16` -> `bfloat16`), or None."""
    for d in DTYPES.values():
        if d.mlir == ir_name and d.kind == "float":
            return d.name
    return None


def int_dtype(bits: int, is_signed: bool) -> str | None:
    """`int8`/`uint8` for (8, True/False); None for a width NumPy has no dtype of."""
    name = f"{'int' if is_signed else 'uint'}{bits}"
    return name if name in DTYPES else None
