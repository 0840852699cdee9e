"""The warpgroup MMA (`wgmma.mma_async.sync.aligned.m64n{N}k{K}`, what `mgpu.wgmma` and
`plgpu.wgmma` emit on Hopper): the accumulators it takes per operand type, its tile multiples,
the N values ptxas accepts and the one GPU it runs on (PTX ISA "Asynchronous Warpgroup Level
Matrix Multiply-Accumulate", jax's `mosaic/gpu/wgmma.py`)."""

from __future__ import annotations

# The accumulator element types jax's `wgmma` accepts per operand (B) element type, in MLIR
# spelling (`wgmma.py` v11:385-406): tf32 (f32 refs) and bf16 accumulate in f32 only; f16 and
# both fp8 types in f32 or f16; i8 in signed i32 only. `_supported_wgmma_types` agrees.
ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "f32": ("f32",),
    "bf16": ("f32",),
    "f16": ("f32", "f16"),
    "f8E4M3FN": ("f32", "f16"),
    "f8E5M2": ("f32", "f16"),
    "i8": ("i32",),
}
# How jax's message names the accepted accumulators of each operand type.
ACCUMULATOR_TEXT: dict[str, str] = {
    "f32": "f32",
    "bf16": "f32",
    "f16": "f32 or f16",
    "f8E4M3FN": "f32 or f16",
    "f8E5M2": "f32 or f16",
    "i8": "s32",
}
# The pair of fp8 types jax lets A and B mix from jax 0.11 (PR #38859).
FP8_TYPES: frozenset[str] = frozenset({"f8E4M3FN", "f8E5M2"})

# One instruction covers M = 64 rows (the warpgroup); N is a multiple of 8 up to 256.
M_MULTIPLE = 64
N_MULTIPLE = 8
N_MAX = 256
# `mgpu.wgmma(..., swizzle=128)`: the default swizzle in bytes.
DEFAULT_SWIZZLE = 128


def integer_n_ok(n: int) -> bool:
    """Whether ptxas takes `wgmma...m64n{n}k32.s32.s8.s8`: N in {8, 16, 24} or a multiple of 16
    up to 256 (PTX ISA, "Matrix shape"; ptxas rejects `.m64n40k32` on sm_90a)."""
    return n in (8, 16, 24) or (n % 16 == 0 and 0 < n <= N_MAX)


# wgmma exists only on sm_90a: ptxas rejects it on sm_90, sm_100a and sm_120a (the target
# confirm's ptx tier compiles for; no rule reads it yet).
ARCH: tuple[int, int] = (9, 0)
ARCH_NAME = "sm_90a"

# The swizzles a wgmma operand may be tiled with and the K they allow are `swizzle.py`'s: jax
# issues the instructions of one K step per swizzle row, so K must be a whole number of rows,
# `swizzle // itemsize` elements (v10:401 v11:421).
