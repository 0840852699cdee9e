"""Blackwell's `tcgen05.mma` (what `mgpu.tcgen05.mma` and `plgpu.tcgen05_mma` emit): the
accumulators each operand element type takes, the instruction kinds, the M and N it accepts and
the GPUs that have it (PTX ISA "tcgen05.mma", jax's `mosaic/gpu/tcgen05.py`, ptxas 13.0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OperandKind:
    """What `tcgen05.mma()` accepts for one operand element type (MLIR name)."""

    element_type: str
    kind: str  # the PTX `.kind::...` it is emitted as
    accumulators: tuple[str, ...]  # accepted D element types without block scaling
    scaled_accumulators: tuple[str, ...]  # with block scaling (empty: scaling is refused)
    # False when `mma()` accepts it but `_do_mma` raises (f32 is not bitcast to tf32).
    lowered: bool = True


# In the order `tcgen05.mma()` tests the element type of A (v10:287-336, v11:298-347,
# v12:331-380): f32 and bf16 take only f32; f16 f16 or f32; fp8 f16 or f32 (f32 only when
# block-scaled); f4 only block-scaled into f32; i8 only s32. Anything else is
# "Unsupported element type".
OPERAND_KINDS: dict[str, OperandKind] = {
    k.element_type: k
    for k in (
        OperandKind("f32", "tf32", ("f32",), (), lowered=False),
        OperandKind("bf16", "f16", ("f32",), ()),
        OperandKind("f16", "f16", ("f16", "f32"), ()),
        OperandKind("f8E4M3FN", "f8f6f4", ("f16", "f32"), ("f32",)),
        OperandKind("f8E5M2", "f8f6f4", ("f16", "f32"), ("f32",)),
        OperandKind("f4E2M1FN", "mxf4", (), ("f32",)),
        OperandKind("i8", "i8", ("i32",), ()),
    )
}

FP8_TYPES: frozenset[str] = frozenset({"f8E4M3FN", "f8E5M2"})
F4_TYPES: frozenset[str] = frozenset({"f4E2M1FN"})

# The element types whose MMA may be block-scaled (`a_scale=`/`b_scale=`); the others raise
# "does not support block scaling" (f32, bf16, f16, i8), and f4 must be (v11:298-345).
SCALABLE_TYPES: frozenset[str] = FP8_TYPES | F4_TYPES
SCALED_ONLY_TYPES: frozenset[str] = F4_TYPES

# The scale element types each scalable operand type takes (v11:429-460): MXFP8 needs e8m0
# scales, (NV)FP4 e8m0 or e4m3. jax 0.10 checks A's scale against the union first (v10:410),
# and fp8's e8m0 only when it emits the instruction (`_do_mma`, v10:645).
SCALE_TYPES: dict[str, tuple[str, ...]] = {
    "f8E4M3FN": ("f8E8M0FNU",),
    "f8E5M2": ("f8E8M0FNU",),
    "f4E2M1FN": ("f8E8M0FNU", "f8E4M3FN"),
}
ANY_SCALE_TYPES: tuple[str, ...] = ("f8E8M0FNU", "f8E4M3FN")

# The M `mma()` takes (v11:281): 128 and 64; A in TMEM needs M=128 (v11:216).
SUPPORTED_M: tuple[int, ...] = (128, 64)
A_IN_TMEM_M = 128

# Tensor memory holds 32-bit cells: a TMEM ref of a narrower type packs 32 // bits elements in
# one (its layout's vector length, "packing") or leaves them one per cell (packing 1); jax
# accepts no other (`TMEMLayout.check_type`), and at most 8 (`_infer_tmem_layout`). A in
# TMEM must be fully packed (v11:218). A 64-row (half-lane) layout needs its columns a
# multiple of 16 (`tmem_half_lane_layout`).
TMEM_MAX_PACKING = 8
TMEM_COLUMN_MULTIPLE = 16


def full_packing(bits: int) -> int:
    """How many elements of `bits` one 32-bit TMEM cell holds when packed."""
    return 32 // bits

# N must be a multiple of this per CTA group (`In 1 CTA MMA, N must be a multiple of 8`), twice
# that for an s32 accumulator (jax 0.11+, v11:362-375).
N_MULTIPLE = {False: 8, True: 16}  # collective -> multiple
# The accumulator columns one instruction computes: 256 on one CTA, 128 per CTA of a pair
# (`Only N <= 128 are supported for collective MMA`); past them jax takes only N=512 on one CTA.
N_PER_INSTRUCTION = 256
INTEGER_N_FACTOR = 2

# Integer operands: the instruction descriptor's A/B format is hard-coded to 1 (S8, "Only s8
# for now", v10:88 v11:91 v12:91), so uint8 data is read as int8.
INTEGER_PTX_TYPE = "s8"

# GPUs with `tcgen05.mma` (ptxas): sm_100a and its family (sm_100f, sm_101a, sm_103a, sm_110a);
# not sm_120a. `.kind::i8` is not on sm_103a (nor sm_100f).
# `engine.parse_arch` drops the `a`/`f` suffix, so sm_100f (no `.kind::i8`) reads as sm_100a:
# only sm_103 is known to lack it.
ARCH_FAMILY: tuple[tuple[int, int], ...] = ((10, 0), (10, 1), (10, 3), (11, 0))
NO_KIND_I8: tuple[tuple[int, int], ...] = ((10, 3),)
ARCH_NAMES = "sm_100a, sm_103a or sm_110a"
KIND_I8_ARCH_NAMES = "sm_100a or sm_110a"

# ---------------------------------------------------------------- K groups and block scales

# The swizzles `tcgen05.mma()` takes are `swizzle.SWIZZLES` (16, "no swizzle", it refuses:
# v11:192).
# Sparse A: the K group is at least this many elements (v11:352).
SPARSE_MIN_K_GROUP = 64
# One instruction reads 4 scales along K: a block-scaled K group spans 4 blocks (v11:363).
SCALES_PER_K_GROUP = 4
# TMEM has 128 lanes: A's scales are (128, K // block) (`TMEM_ROWS`, v11:466); B's rows a
# multiple of 128 and at least N (v11:486).
SCALE_ROWS = 128
# jax 0.10 takes the scale block from the scale type (v10:349): 32 for e8m0, 16 otherwise;
# jax 0.11 on from K // A's scale columns, and checks it per operand type (v11:433-457).
V10_SCALE_BLOCK = {"f8E8M0FNU": 32}
V10_DEFAULT_SCALE_BLOCK = 16
# The blocks each operand type takes with each scale type (jax 0.11+).
SCALE_BLOCKS: dict[tuple[str, str], tuple[int, ...]] = {
    ("f8E4M3FN", "f8E8M0FNU"): (32,),
    ("f8E5M2", "f8E8M0FNU"): (32,),
    ("f4E2M1FN", "f8E4M3FN"): (16,),
    ("f4E2M1FN", "f8E8M0FNU"): (16, 32),
}
# jax 0.10 refuses a block-scaled N that is not a multiple of 32 (v10:372); jax 0.11 on asks
# 8 (16 collective), which the N per CTA check before it already ensures.
V10_SCALED_N_MULTIPLE = 32


def k_group(a_swizzle: int, b_swizzle: int, bits: int, sparse: bool = False,
            scale_block: int | None = None) -> int:
    """The elements of K one group of instructions covers: what `tcgen05.mma()`'s K must be a
    multiple of (v11:350-363)."""
    group = 8 * max(a_swizzle * (1 + sparse), b_swizzle) // bits
    if sparse:
        group = max(group, SPARSE_MIN_K_GROUP)
    if scale_block is not None:
        group = max(group, SCALES_PER_K_GROUP * scale_block)
    return group
