"""The warp-level MMA (`mma.sync.m16n8k*`, what `mgpu.mma` and `plgpu.mma` emit): the tiles of
its operands, the accumulators it takes and the GPUs it needs (PTX ISA "Matrix fragments for
mma", jax's `mma.py`)."""

from __future__ import annotations

# One `mma.sync.m16n8k{K}` covers a 16 x 8 accumulator tile per warp.
TILE_M, TILE_N = 16, 8
# The m_warps `MMALayouts` accepts, in the order `MMALayouts.for_shape` tries them; 4 is the
# default (the four warps of a warpgroup).
M_WARPS: tuple[int, ...] = (4, 2, 1)
DEFAULT_M_WARPS = 4

# The accumulator element type the MMA takes per operand element type's kind: integers
# accumulate in (signed) i32, f64 in f64 (jax 0.12), every other float in f32.
INT_ACCUMULATOR = "i32"
FLOAT_ACCUMULATOR = "f32"
F64_ACCUMULATOR = "f64"
ACCUMULATOR_TYPES: frozenset[str] = frozenset({INT_ACCUMULATOR, FLOAT_ACCUMULATOR, F64_ACCUMULATOR})
# The same, as NumPy dtypes.
ACCUMULATOR_DTYPES: frozenset[str] = frozenset({"int32", "float32", "float64"})

# The oldest GPU (major, minor) whose `mma.sync` takes an operand element type; the others run
# on every GPU jax supports (sm_80). ptxas is the oracle: fp8 needs sm_89, f64 m16n8k8 sm_90.
ARCH_MINIMUMS: dict[str, tuple[int, int]] = {
    "f8E4M3FN": (8, 9),
    "f8E5M2": (8, 9),
    "f64": (9, 0),
}


# Every other operand element type has its `mma.sync` from here (jax's minimum GPU).
BASE_ARCH: tuple[int, int] = (8, 0)


def arch_name(arch: tuple[int, int]) -> str:
    """(8, 9) -> `sm_89`."""
    return f"sm_{arch[0]}{arch[1]}"


def elements_per_register(bits: int) -> int:
    """Operand elements per 32-bit register; one per (64-bit) register for f64."""
    return max(32 // bits, 1)


def k_tile(bits: int) -> int:
    """The K of one MMA tile: 256 bits of elements (m16n8k16 for 16-bit types, k32 for 8-bit,
    k64 for 4-bit), 8 for f64 (m16n8k8): Mosaic's `256 // bitwidth`, except for f64."""
    return 8 * elements_per_register(bits)


def acc_tile(m_warps: int) -> tuple[int, int]:
    """The accumulator base tile of `MMALayouts(T, m_warps=...).acc`: (16 m_warps, 8 n_warps)."""
    return (TILE_M * m_warps, TILE_N * (DEFAULT_M_WARPS // m_warps))


def base_tile(role: str, bits: int | None, m_warps: int) -> tuple[int, int] | None:
    """The base tile of an operand's MMA layout: lhs `(16 m_warps, k)`, rhs `(k, 8 n_warps)`,
    acc `(16 m_warps, 8 n_warps)`, with `n_warps = 4 // m_warps`; None when an operand's bit
    width is unknown."""
    m, n = acc_tile(m_warps)
    if role == "acc":
        return (m, n)
    if bits is None:
        return None
    if role == "a":
        return (m, k_tile(bits))
    return (k_tile(bits), n)
