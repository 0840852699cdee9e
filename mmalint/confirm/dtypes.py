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


def mosaic_ptx_type(element_type: str, signedness: str | None) -> str:
    """The PTX type name Mosaic's `_ptx_dtype_str` writes for an element type.

    Integers take `s`/`u` from `is_signed` (a signless integer is spelled `s`, the sign jax's
    Warpgroup path forces); fp8 has PTX names of its own; every other type is printed as MLIR
    prints it, which is why an unsupported operand such as `f32` reaches ptxas as `.f32`.
    """
    if element_type == "f8E4M3FN":
        return "e4m3"
    if element_type == "f8E5M2":
        return "e5m2"
    if mlir_is_integer(element_type):
        return ("u" if signedness == "unsigned" else "s") + element_type[1:]
    return element_type


# A supported stand-in of each bit width: `MMALayouts` depends only on the operand bit width,
# so a layout "built for 16-bit operands" is rebuilt with any 16-bit type.
LAYOUT_DTYPE_FOR_BITS: dict[int, str] = {
    4: "int4",
    8: "int8",
    16: "bfloat16",
    32: "float32",
    64: "float64",
    1: "bool",
    2: "int2",
}
