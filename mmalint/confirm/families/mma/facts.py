"""The warp-level family's facts as the reference lowering uses them.

Tiles, m_warps, accepted accumulators and arch minimums are `mmalint.facts.mma`'s, the tables
the rules read too (dependency-free, so workers import them); what is only confirm's (fix
substitutes, operand guesses, which tier can show which rule) is written once here.
`instruction.py`, `fragments.py`, `cases.py` and `fixes.py` read this module.
"""

from __future__ import annotations

from mmalint.confirm import dtypes
from mmalint.facts import mma as shared

# ---------------------------------------------------------------- tiles and accumulators

TILE_M, TILE_N = shared.TILE_M, shared.TILE_N
VALID_M_WARPS = shared.M_WARPS
DEFAULT_M_WARPS = shared.DEFAULT_M_WARPS
k_tile = shared.k_tile
acc_tile = shared.acc_tile


def accumulator_dtype(operand_element_type: str) -> str:
    """The one accumulator `mma` accepts for an operand element type, as a NumPy dtype. Mosaic
    keys it on the MLIR element type (`isinstance(element_type, ir.IntegerType)`), so this does
    too: bool (i1) counts as an integer here."""
    if dtypes.mlir_is_integer(operand_element_type):
        accumulator = shared.INT_ACCUMULATOR
    elif operand_element_type == shared.F64_ACCUMULATOR:
        accumulator = shared.F64_ACCUMULATOR
    else:
        accumulator = shared.FLOAT_ACCUMULATOR
    dtype = dtypes.dtype_for(accumulator, "signed")
    assert dtype is not None  # the three accumulators are NumPy dtypes
    return dtype


# An unsupported operand dtype -> the supported one of its kind a fix moves to (`mma` takes
# bf16, f16, f8E4M3FN, f8E5M2, i8, i4, and f64 from jax 0.12).
SUPPORTED_SUBSTITUTE: dict[str, str] = {
    "float32": "bfloat16", "float64": "bfloat16", "complex64": "bfloat16",
    "complex128": "bfloat16", "float8_e4m3fnuz": "float8_e4m3fn",
    "float8_e5m2fnuz": "float8_e5m2", "float8_e4m3b11fnuz": "float8_e4m3fn",
    "float8_e4m3": "float8_e4m3fn", "float8_e3m4": "float8_e4m3fn",
    "float4_e2m1fn": "float8_e4m3fn", "int16": "int8", "int32": "int8", "int64": "int8",
    "uint16": "uint8", "uint32": "uint8", "uint64": "uint8", "int2": "int4", "uint2": "uint4",
    "bool": "uint8",
}

# A signed/unsigned operand mix -> the signed type both operands take in its fix.
SIGNED_OF_MIX: dict[frozenset[str], str] = {
    frozenset({"int8", "uint8"}): "int8", frozenset({"int4", "uint4"}): "int4"}

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

# What an operand of unknown dtype most likely is, from the bit width its MMA layout was built
# for and the accumulator's kind (an int32 accumulator goes with integer operands).
GUESS_FLOAT_FOR_BITS: dict[int, str] = {16: "bfloat16", 8: "float8_e4m3fn", 32: "float32",
                                        64: "float64"}
GUESS_INT_FOR_BITS: dict[int, str] = {8: "int8", 4: "int4", 16: "int16", 32: "int32"}


def guess_operand_dtype(bits: int, *, integer: bool, unsigned: bool) -> str | None:
    """The dtype an operand of unknown type is rebuilt with (None when no guess fits)."""
    if integer:
        name = GUESS_INT_FOR_BITS.get(bits)
        return "u" + name if name and unsigned else name
    return GUESS_FLOAT_FOR_BITS.get(bits)


# ---------------------------------------------------------------- targets

# The first architecture with the `mma.sync` of an operand element type (PTX ISA; ptxas:
# "Feature 'mma with FP8 floating point type' requires .target sm_89 or higher", "'.m16n8k8
# with double types' requires .target sm_90"); every other operand type has it from sm_80.
ARCH_MINIMUM: dict[str, str] = {t: shared.arch_name(a) for t, a in shared.ARCH_MINIMUMS.items()}
BASE_ARCH = shared.arch_name(shared.BASE_ARCH)

# ---------------------------------------------------------------- rule codes

# Rule families whose mistake is in the instruction's types or target (dtype, signedness,
# target): the instruction shows it (ptxas, CuPy), and it does not depend on the shape.
INSTRUCTION_CODE_PREFIXES = ("MMA1", "MMA2", "MMA5")
# Rule families only jax can show (register layouts, shapes): the instruction never sees them.
JAX_ONLY_CODE_PREFIXES = ("MMA3", "MMA4")
# Codes in an instruction family that the instruction still cannot show, and why.
NOT_IN_INSTRUCTION: dict[str, str] = {
    "MMA202": "is_signed is an attribute of jax's FragmentedArray; PTX spells every integer "
              ".s or .u",
}
# Likewise for the CuPy path of the gpu tier, which runs the instruction without jax.
NOT_ON_CUPY: dict[str, str] = {"MMA202": "is_signed is a jax attribute"}
