"""The tcgen05 conditions of `mma()`'s second step (`rules/checks/tcgen05.toml`): the MMA as it
reaches its instruction groups, every check before passed: the N range (MMA719), the K group
(MMA716), jax 0.10's block-scaled N multiple (MMA717) and the block scales' shapes (MMA718).
The family's other conditions, and the registry they join, are `tcgen05.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmalint.checks.conditions.registry import Outcome, element_bits, one
from mmalint.checks.conditions.tcgen05 import (
    Tcgen05Table,
    call_option,
    condition,
    is_scaled,
    operand_element,
    scale_types,
    type_name,
)
from mmalint.facts.dtypes import IR_TYPES
from mmalint.facts.swizzle import SWIZZLES, row_elements, swizzle_for_k, tiling_fits
from mmalint.facts.tcgen05 import (
    ANY_SCALE_TYPES,
    F4_TYPES,
    INTEGER_N_FACTOR,
    N_MULTIPLE,
    OPERAND_KINDS,
    SCALABLE_TYPES,
    SCALE_BLOCKS,
    SCALE_ROWS,
    SCALE_TYPES,
    SCALES_PER_K_GROUP,
    SUPPORTED_M,
    V10_DEFAULT_SCALE_BLOCK,
    V10_SCALE_BLOCK,
    V10_SCALED_N_MULTIPLE,
    k_group,
)

if TYPE_CHECKING:
    from mmalint.checks.call import MmaCall


@dataclass(frozen=True)
class _Mma:
    """A tcgen05 MMA as `mma()` has worked it out when it reaches its step 2 (the instruction
    groups): every check before passed, or failed in a way whose fix keeps these facts."""

    element: str  # A's MLIR element type
    bits: int
    m: int
    n: int  # B's N: per CTA
    k: int
    collective: bool
    a_swizzle: int
    b_swizzle: int
    scaled: bool


def _logical(call: MmaCall, role: str) -> tuple[int, int] | None:
    """An operand's (rows, columns) as `mma()` reads them: a Pallas ref's shape; a Mosaic GPU
    SMEM memref's `(s0 * s2, s1 * s3)` (`mma_utils.tiled_memref_shape`, 4-D only)."""
    shape = call.operands[role].shape
    if shape is None or None in shape:
        return None
    dims = [d for d in shape if d is not None]
    if len(dims) == 2 and call.frontend == "pallas":
        return dims[0], dims[1]
    if len(dims) == 4 and call.frontend == "mosaic":
        return dims[0] * dims[2], dims[1] * dims[3]
    return None


def _swizzles(call: MmaCall) -> tuple[int, int] | None:
    """A's and B's swizzles as `mma()` gets them: Mosaic GPU's `a_swizzle=`/`b_swizzle=`;
    Pallas's from the SMEM refs' transforms, which must be one tiling that fits one swizzle, the
    same for A and B (Lane checks them; Warpgroup's layout inference accepts nothing else)."""
    if call.frontend == "mosaic":
        a, b = call_option(call, "a_swizzle"), call_option(call, "b_swizzle")
        return (a, b) if a in SWIZZLES and b in SWIZZLES else None
    a, b = call.a, call.b
    if b.swizzle is None or b.swizzle not in SWIZZLES or b.element_type is None:
        return None
    b_bits = IR_TYPES[b.element_type].bits
    a_bits = element_bits(a.element_type)
    if a_bits is None or not tiling_fits(b.tiling, b.swizzle, b_bits) or a.swizzle != b.swizzle:
        return None
    if not tiling_fits(a.tiling, a.swizzle, a_bits):
        return None
    return b.swizzle, b.swizzle


def _mma_shape(call: MmaCall, table: Tcgen05Table) -> _Mma | None:
    """The MMA `mma()` reaches its instruction groups with, or None when something before is
    unknown, not replayed, or a finding whose fix may change K, the swizzles or the scaling:
    A in SMEM (A in TMEM has layout checks of its own), A's and B's K equal, one element type,
    D of (M, N x CTAs) at M 128 (or 64, with what it needs), in a 32-bit type (a 16-bit D's
    TMEM layout depends on its packing), no sparsity, scales on both sides or none, block
    scaling exactly where the type has it."""
    found = operand_element(call, table)
    scaled = is_scaled(call)
    collective = call_option(call, "collective")
    if found is None or scaled is None or collective not in (True, False):
        return None
    element = found[0]
    if element not in OPERAND_KINDS or call_option(call, "sparse") is not False:
        return None
    if call.a.memory_space != "smem" or call.acc.element_type not in ("f32", "i32"):
        return None
    if (scaled and element not in SCALABLE_TYPES) or (element in F4_TYPES and not scaled):
        return None  # MMA707 / MMA708 first: their fix adds or drops the scales
    swizzles = _swizzles(call)
    a, b, d = _logical(call, "a"), _logical(call, "b"), call.acc.shape
    if swizzles is None or a is None or b is None or d is None or len(d) != 2 or None in d:
        return None
    (m, k_a), (k, n) = a, b
    ctas = 2 if collective else 1
    bits = IR_TYPES[element].bits
    if k_a != k or tuple(d) != (m, n * ctas):
        return None
    if m == 64 and not collective:
        if scaled or 8 * swizzles[1] // bits > n // 2:
            return None  # "not supported for 1CTA M=64" / "Swizzle=... is too big": not replayed
    elif m not in SUPPORTED_M:
        return None
    return _Mma(element, bits, m, n, k, bool(collective), swizzles[0], swizzles[1], scaled)


def _n_supported(mma: _Mma) -> bool:
    """The N range checks `mma()` makes between the N multiples and the K group pass."""
    return _n_range_failing(mma) is None


def _scale_block(call: MmaCall, table: Tcgen05Table, mma: _Mma) -> int | None:
    """The scale block `mma()` works with: K // A's scale columns (jax 0.11 on; None when they
    do not divide K, which it refuses first), or the scale type's (jax 0.10)."""
    if table.scale_block_from_columns:
        columns = call_option(call, "a_scale_columns")
        if not isinstance(columns, int) or columns <= 0 or mma.k % columns:
            return None
        return mma.k // columns
    scale_type = call_option(call, "a_scale_type")
    if scale_type is None:
        return None
    return V10_SCALE_BLOCK.get(scale_type, V10_DEFAULT_SCALE_BLOCK)


def _group(call: MmaCall, table: Tcgen05Table, mma: _Mma) -> int | None:
    block = _scale_block(call, table, mma) if mma.scaled else None
    if mma.scaled and block is None:
        return None
    return k_group(mma.a_swizzle, mma.b_swizzle, mma.bits, scale_block=block)


@condition("k-group")
def _k_group(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """K not a multiple of the K group: the elements of the widest swizzle row of A and B, or
    of 4 scale blocks when block-scaled (`k_group_elems`, v11:350-366)."""
    mma = _mma_shape(call, table)
    if mma is None or not _n_supported(mma) or (mma.scaled and not _allocatable_scales(call)):
        return one(None, "b")
    group = _group(call, table, mma)
    if group is None:
        return one(None, "b")
    if mma.k % group == 0:
        return one(False, "b")
    return one(True, "b", k_value=str(mma.k), k_group=str(group),
                reason=_k_reason(call, table, mma, group), remedy=_k_remedy(call, mma, group))


def _k_reason(call: MmaCall, table: Tcgen05Table, mma: _Mma, group: int) -> str:
    swizzle_group = k_group(mma.a_swizzle, mma.b_swizzle, mma.bits)
    if mma.scaled and group > swizzle_group:
        block = group // SCALES_PER_K_GROUP
        return f"a block-scaled instruction group reads {SCALES_PER_K_GROUP} scales of {block} elements"
    swizzle = max(mma.a_swizzle, mma.b_swizzle)
    return f"a {swizzle}-byte swizzle row holds {group} {type_name(mma.element)} elements"


def _k_remedy(call: MmaCall, mma: _Mma, group: int) -> str:
    swizzle_group = k_group(mma.a_swizzle, mma.b_swizzle, mma.bits)
    if mma.scaled and group > swizzle_group:
        return (f"make K a multiple of {group} (e.g. one MMA over two K tiles), or use a wider "
                "scale block")
    fitting = swizzle_for_k(mma.k, mma.bits)
    if fitting is None:
        return f"pad K to a multiple of {row_elements(min(SWIZZLES), mma.bits)} (the smallest swizzle's row)"
    tile = f"(8, {row_elements(fitting, mma.bits)})"
    if call.frontend == "pallas":
        return (f"declare A's and B's SMEM with `plgpu.SwizzleTransform({fitting})` and "
                f"`plgpu.TilingTransform({tile})`")
    return (f"pass `a_swizzle={fitting}, b_swizzle={fitting}` and stage A and B with that swizzle "
            f"(tiles {tile}, in their SMEM shapes and copies)")


def _n_per_cta_ok(call: MmaCall, mma: _Mma) -> bool:
    """The `In ... MMA, N must be a multiple of ...` check (MMA703) passes."""
    multiple = N_MULTIPLE[mma.collective] * (INTEGER_N_FACTOR if call.acc.element_type == "i32" else 1)
    lane_groups = 2 if mma.m == 64 and not mma.collective else 1
    return (mma.n // lane_groups) % multiple == 0


@condition("scaled-n-v10")
def _scaled_n_v10(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.10: a block-scaled MMA whose N is not a multiple of 32 (v10:372), once the N per
    CTA check before it passes (its fix may make N a multiple of 32, or not)."""
    mma = _mma_shape(call, table)
    if mma is None or not mma.scaled:
        return one(None if mma is None else False, "b")
    if not _n_per_cta_ok(call, mma):
        return one(None, "b")
    return one(mma.n % V10_SCALED_N_MULTIPLE != 0, "b", n_value=str(mma.n),
                n_fixed=str(-(-mma.n // V10_SCALED_N_MULTIPLE) * V10_SCALED_N_MULTIPLE))


def _n_reached(call: MmaCall, table: Tcgen05Table) -> _Mma | None:
    """The MMA as `mma()` reaches its N range checks: every check before replayed and passed
    (the N per CTA multiple, jax 0.10's block-scaled N); None where one is unknown or fails."""
    mma = _mma_shape(call, table)
    if mma is None or not _n_per_cta_ok(call, mma):
        return None
    if mma.scaled and call.version == "0.10" and mma.n % V10_SCALED_N_MULTIPLE:
        return None
    return mma


# The N range checks in jax's order (v10:376-382 v11:392-398), each with what it says is wrong.
_N_RANGE: dict[str, str] = {
    "n-not-512": "N={n} per CTA is over 256 and not 512, the only larger N the instruction takes",
    "n-collective-max": "a collective MMA takes N <= 128 per CTA, but the accumulator gives N={n} per CTA",
    "n-max": "an MMA takes N <= 512, but the accumulator gives N={n}",
}


def _n_range_failing(mma: _Mma) -> str | None:
    """The N range check `mma()` raises at first, or None when N is in range: over 256 and not
    a power of two, else over 128 for a collective MMA, else over 512."""
    if mma.n > 256 and mma.n.bit_count() != 1:
        return "n-not-512"
    if mma.collective and mma.n > 128:
        return "n-collective-max"
    if not mma.collective and mma.n > 512:
        return "n-max"
    return None


def _n_range(call: MmaCall, table: Tcgen05Table, check: str) -> list[Outcome]:
    mma = _n_reached(call, table)
    if mma is None:
        return one(None, "acc")
    return one(_n_range_failing(mma) == check, "acc", n_per_cta=str(mma.n),
               problem=_N_RANGE[check].format(n=mma.n), remedy=_n_remedy(mma))


@condition("n-not-512")
def _n_not_512(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """N per CTA over 256 and not a power of two: "The only supported N > 256, is 512"."""
    return _n_range(call, table, "n-not-512")


@condition("n-collective-max")
def _n_collective_max(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A collective (2 CTA) MMA with N over 128 per CTA."""
    return _n_range(call, table, "n-collective-max")


@condition("n-max")
def _n_max(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A 1 CTA MMA with N over 512 (a power of two: 1024...)."""
    return _n_range(call, table, "n-max")


def _n_remedy(mma: _Mma) -> str:
    limit = 128 if mma.collective else 256
    return (f"split N into tiles of at most {limit} per CTA" + ("" if mma.collective else " (or exactly 512)")
            + ", one MMA each")


@condition("a-scale-columns")
def _a_scale_columns(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.11 on: A's scale columns do not divide K (v11:360), the first use of the scales'
    shape, before any N or K check."""
    mma = _mma_shape(call, table)
    columns = call_option(call, "a_scale_columns")
    if mma is None or not mma.scaled:
        return one(None if mma is None else False, "a")
    if not isinstance(columns, int) or columns <= 0 or not _allocatable_scales(call):
        return one(None, "a")
    return one(mma.k % columns != 0, "a", k_value=str(mma.k), columns=str(columns),
                problem=f"K={mma.k} is not a whole number of blocks of A's {columns} scale columns",
                remedy=_scale_columns_remedy(mma))


def _allocatable_scales(call: MmaCall) -> bool:
    """Whether A's scales are 128 rows with a multiple of 4 columns: then they allocate in the
    scales' TMEM layout and in a packed default one alike, and the column checks below (made
    before the scales' layout is looked at) raise the same for both. Other rows fail to
    allocate in one of them (not replayed), or reach the layout check first: silent."""
    rows, columns = call_option(call, "a_scale_rows"), call_option(call, "a_scale_columns")
    return (rows == SCALE_ROWS and isinstance(columns, int) and columns > 0
            and columns % SCALES_PER_K_GROUP == 0)


def _scale_columns_remedy(mma: _Mma) -> str:
    blocks = [b for (element, _), accepted in SCALE_BLOCKS.items() if element == mma.element for b in accepted]
    block = max(blocks) if blocks else 32
    return f"allocate A's scales as (128, K // {block}) = (128, {mma.k // block})"


def _scales_reach_shapes(call: MmaCall, table: Tcgen05Table) -> tuple[_Mma, int] | None:
    """The MMA and its scale block when `mma()` reaches the scales' shape checks with them:
    the N and K group checks pass (a K fix would change the scales' columns), the scale types
    are ones the operand type takes and agree (MMA710 first otherwise)."""
    mma = _mma_shape(call, table)
    if mma is None or not mma.scaled or not _n_supported(mma) or not _allocatable_scales(call):
        return None
    block = _scale_block(call, table, mma)
    group = _group(call, table, mma)
    a_type, b_type = scale_types(call)
    if block is None or group is None or mma.k % group or a_type is None or a_type != b_type:
        return None
    if table.scale_block_from_columns:
        if a_type not in SCALE_TYPES.get(mma.element, ()):
            return None
    elif a_type not in ANY_SCALE_TYPES:
        return None
    return mma, block


@condition("scale-block")
def _scale_block_check(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.11 on: the block A's scale columns give (K // columns) is not one the operand and
    scale types take: 32 for MXFP8, 16 for float4 with e4m3 scales, 16 or 32 with e8m0."""
    reached = _scales_reach_shapes(call, table)
    if reached is None:
        return one(None, "a")
    mma, block = reached
    accepted = SCALE_BLOCKS.get((mma.element, call_option(call, "a_scale_type")))
    if accepted is None:
        return one(None, "a")
    expected = " or ".join(str(b) for b in accepted)
    columns = call_option(call, "a_scale_columns")
    return one(block not in accepted, "a", expected=expected, scale_block=str(block),
                problem=f"A's {columns} scale columns make blocks of {block} elements of K; "
                        f"{type_name(mma.element)} with {type_name(call_option(call, 'a_scale_type'))} scales takes {expected}",
                remedy=f"allocate A's scales as (128, K // {max(accepted)}) = (128, {mma.k // max(accepted)})")


@condition("a-scale-shape-v10")
def _a_scale_shape_v10(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.10: A's scale columns are not K // block, the block its scale type implies (32 for
    e8m0, else 16): `A scale shape mismatch` (v10:420). Later jaxes derive the block from the
    columns and check it instead (`scale-block`)."""
    reached = _scales_reach_shapes(call, table)
    if reached is None:
        return one(None, "a")
    mma, block = reached
    columns = call_option(call, "a_scale_columns")
    expected = (SCALE_ROWS, mma.k // block)
    return one(columns != expected[1], "a", expected_rows=str(expected[0]),
                expected_columns=str(expected[1]), got=f"({SCALE_ROWS}, {columns})",
                problem=f"A's scales have {columns} columns; jax 0.10 reads {type_name(call_option(call, 'a_scale_type'))} "
                        f"scales as one per {block} elements of K: ({expected[0]}, {expected[1]})",
                remedy=f"allocate A's scales as ({expected[0]}, {expected[1]})")
