"""Element types as the reference lowering needs them: NumPy name, MLIR name, bit width, sign.

The rows come from `mmalint.dtype_table`, shared with the analyzer; this module only adds what
the reference lowering asks of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.dtype_table import ELEMENT_TYPES, Kind


@dataclass(frozen=True)
class DType:
    """One NumPy-style dtype and the MLIR element type `utils.dtype_to_ir_type` gives for it."""

    name: str
    kind: Kind
    bits: int
    mlir: str

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def natural_signedness(self) -> str:
        """What `utils.is_signed(dtype)` gives, spelled as in the JSON `signedness` field."""
        if self.kind == "int":
            return "signed"
        if self.kind in ("uint", "bool"):
            return "unsigned"
        return "signless"


_TABLE: tuple[DType, ...] = tuple(DType(*row) for row in ELEMENT_TYPES)

DTYPES: dict[str, DType] = {d.name: d for d in _TABLE}

# MLIR element type -> bit width, for types named only by `element_type`.
_MLIR_BITS: dict[str, int] = {d.mlir: d.bits for d in _TABLE} | {"tf32": 32}


def lookup(name: str | None) -> DType | None:
    """The dtype for a NumPy name (`int8`, `bfloat16`...), or None."""
    return DTYPES.get(name) if name else None


def mlir_bits(element_type: str) -> int | None:
    """Bit width of an MLIR element type as jax prints it (`i8`, `bf16`, `f8E4M3FN`)."""
    return _MLIR_BITS.get(element_type)


def mlir_is_integer(element_type: str) -> bool:
    return element_type.startswith("i") and element_type[1:].isdigit()


def dtype_for(element_type: str, signedness: str | None) -> str | None:
    """The NumPy dtype an (MLIR type, signedness) pair stands for (`i8` + unsigned = `uint8`)."""
    if mlir_is_integer(element_type):
        if element_type == "i1":
            return "bool"
        prefix = "uint" if signedness == "unsigned" else "int"
        name = f"{prefix}{element_type[1:]}"
        return name if name in DTYPES else None
    for d in _TABLE:
        if d.mlir == element_type:
            return d.name
    return None


# fp8 element types have PTX names of their own.
_FP8_PTX: dict[str, str] = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def mosaic_ptx_type(element_type: str, signedness: str | None) -> str:
    """The PTX type name Mosaic's `_ptx_dtype_str` writes for an element type.

    Integers take `s`/`u` from `is_signed` (a signless integer is spelled `s`, the sign jax's
    Warpgroup path forces); fp8 has PTX names of its own; every other type is printed as MLIR
    prints it, which is why an unsupported operand such as `f32` reaches ptxas as `.f32`.
    """
    if element_type in _FP8_PTX:
        return _FP8_PTX[element_type]
    if mlir_is_integer(element_type):
        return ("u" if signedness == "unsigned" else "s") + element_type[1:]
    return element_type


def dtype_for_ptx(ptx_type: str) -> str | None:
    """The NumPy dtype a PTX type name stands for (`s8` int8, `u32` uint32, `e4m3`
    float8_e4m3fn, `bf16` bfloat16), the inverse of `mosaic_ptx_type`; None for `b32` & co."""
    for mlir, name in _FP8_PTX.items():
        if name == ptx_type:
            return dtype_for(mlir, None)
    if ptx_type[:1] in ("s", "u") and ptx_type[1:].isdigit():
        return dtype_for("i" + ptx_type[1:], "unsigned" if ptx_type[0] == "u" else "signed")
    if ptx_type.startswith("f") or ptx_type == "bf16":
        return dtype_for(ptx_type, None)
    return None


def bit_width(name: str) -> int | None:
    """Bits of one element of a NumPy dtype name, or None for a name the table lacks."""
    info = DTYPES.get(name)
    return info.bits if info else None
