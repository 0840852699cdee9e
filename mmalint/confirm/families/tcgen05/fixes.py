"""The fixed call per MMA7xx rule, and the tiles the tcgen05 kernel needs (host side).

The accepted accumulators per operand type are `mmalint.facts.tcgen05`'s, the table the
rules read.
"""

from __future__ import annotations

from dataclasses import replace

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call
from mmalint.confirm.families.smem_cases import Tiles, as_dtype, logical_shape
from mmalint.facts import tcgen05 as facts
from mmalint.facts.swizzle import SWIZZLES, row_elements, swizzle_for_k

FIX_DESCRIPTIONS: dict[str, str] = {
    "MMA701": "accumulator `d` -> the one the operands take (f32; int32 for int8)",
    "MMA702": "operands -> bfloat16, the float32 accumulator kept",
    "MMA703": "N rounded up to the multiple the instruction takes (8 per CTA, twice that for "
              "an int32 accumulator or a collective MMA)",
    "MMA704": "both scales dropped (an unscaled MMA; passing `b_scale=` too is the other fix)",
    "MMA705": "operands stored as int8 (data in [-128, 127]), which kind::i8 reads correctly",
    "MMA706": "M -> 128",
    # MMA707-710 also take, where the fixed operands need them, the accumulator their type
    # takes and (float4) block scales: see `_settled`.
    "MMA707": "both scales dropped (an unscaled MMA of the same operands)",
    "MMA708": "block scales added: float8_e8m0fnu for A and B (MXFP4), one per 32 elements of K",
    "MMA709": "b -> a's dtype (and, where a's type needs them, the accumulator it takes and "
              "its block scales)",
    "MMA710": "both scales -> the type the operands take (float8_e8m0fnu), one per 32 "
              "elements of K",
    **{code: text for code, text in (
        ("MMA713", "A kept in SMEM (the M of the tile kept)"),
        ("MMA714", "A's TMEM allocated fully packed (32 // bits per cell; collective for a "
                   "collective MMA)"),
        ("MMA715", "A kept in SMEM (the block-scaled MMA kept)"),
    )},
    "MMA716": "A's and B's swizzle -> the widest whose row divides K (64 bytes for K = 32 "
              "bf16); K padded to the 32-byte row when none does",
    "MMA717": "N rounded up to a multiple of 32 (jax 0.10's block-scaled N)",
    "MMA718": "A's and B's scales -> (rows, K // the operand type's block): 32 for MXFP8",
    "MMA719": "N -> 256 (128 per CTA for a collective MMA), the most one instruction takes",
}
CODES = frozenset(FIX_DESCRIPTIONS)


def _integer_d(call: Call) -> bool:
    return dtypes.mlir_is_integer(call.acc.mlir or "")


def n_multiple(call: Call) -> int:
    multiple = facts.N_MULTIPLE[bool(call.option("collective"))]
    return multiple * (facts.INTEGER_N_FACTOR if _integer_d(call) else 1)


TILES = Tiles(default_m=128, default_n=128, m_multiple=64, n_multiple=n_multiple,
              arch=facts.ARCH_FAMILY[0])


def _accepted_accumulator(call: Call) -> str:
    kind = facts.OPERAND_KINDS.get(call.a.mlir or "")
    scaled = bool(call.option("a_scale")) and bool(call.option("b_scale"))
    accepted = (kind.scaled_accumulators if scaled else kind.accumulators) if kind else ()
    # f32 where it is accepted (what every float kind takes), else the one there is.
    choice = "f32" if "f32" in accepted or not accepted else accepted[0]
    return dtypes.dtype_for(choice, "signed") or "float32"


def _resized(call: Call, m: int, n: int) -> Call:
    a, b = logical_shape(call.a), logical_shape(call.b)
    k = a[1] if a else (b[0] if b else 128)
    return replace(call, acc=replace(call.acc, shape=(m, n)),
                   a=replace(call.a, shape=(m, k)), b=replace(call.b, shape=(k, n)))


def fixed_call(call: Call, code: str) -> Call | None:
    """The call with the finding's mistake fixed (None for a code with no reference case)."""
    m, n = logical_shape(call.acc) or (TILES.default_m, TILES.default_n)
    if code == "MMA701":
        return replace(call, acc=as_dtype(call.acc, _accepted_accumulator(call)))
    if code == "MMA702":
        return replace(call, a=as_dtype(call.a, "bfloat16"), b=as_dtype(call.b, "bfloat16"))
    if code == "MMA703":
        return _resized(call, m, -(-n // n_multiple(call)) * n_multiple(call))
    if code == "MMA704":
        options = dict(call.options) | {"a_scale": False, "b_scale": False}
        return replace(call, options=tuple(sorted(options.items())))
    if code == "MMA705":
        return replace(call, a=as_dtype(call.a, "int8"), b=as_dtype(call.b, "int8"))
    if code == "MMA706":
        return _resized(call, 128, n)
    if code == "MMA719":
        return _resized(call, m, min(n, facts.N_PER_INSTRUCTION))
    if code in ("MMA716", "MMA717", "MMA718"):
        return group_fixed(call, code, m, n)
    if (own := _own_change(call, code)) is not None:
        return _settled(own)
    return tmem_a_fixed_call(call, code)


# The rules about A in TMEM (MMA713-715), whose kernels `kernels.build` builds with A in TMEM.
TMEM_A_CODES = frozenset({"MMA713", "MMA714", "MMA715"})


def tmem_a_fixed_call(call: Call, code: str) -> Call | None:
    """MMA713 and MMA715: A read from SMEM instead (the same tile, the same scales); MMA714: A's
    TMEM fully packed, and collective when the MMA is."""
    if code in ("MMA713", "MMA715"):
        return replace(call, a=replace(call.a, memory_space="smem", tmem_packing=None,
                                       tmem_collective=None))
    if code == "MMA714":
        bits = call.a.bits or 16
        collective = True if call.option("collective") else call.a.tmem_collective
        return replace(call, a=replace(call.a, tmem_packing=max(32 // bits, 1), tmem_collective=collective))
    return None


def _own_change(call: Call, code: str) -> Call | None:
    """MMA707-710: the change that fixes the finding's mistake and nothing else (what
    `unmasked_call` applies); `fixed_call` then makes the rest of the call build."""
    if code == "MMA707":
        return _with_scales(call, None)
    if code in ("MMA708", "MMA710"):
        return _with_scales(call, _accepted_scale_type(call))
    if code == "MMA709":
        return _b_as_a(call)
    return None


def _with_scales(call: Call, scale_type: str | None) -> Call:
    """The call with both block scales of `scale_type` (their columns left to K / block),
    or with none when `scale_type` is None."""
    scaled = scale_type is not None
    options = dict(call.options) | {
        "a_scale": scaled, "b_scale": scaled, "a_scale_type": scale_type,
        "b_scale_type": scale_type, "a_scale_columns": None}
    return replace(call, options=tuple(sorted(options.items())))


def _accepted_scale_type(call: Call) -> str:
    """The first scale type A's element type takes (`facts.tcgen05.SCALE_TYPES`): e8m0."""
    return facts.SCALE_TYPES.get(call.a.mlir or "", facts.ANY_SCALE_TYPES)[0]


def _b_as_a(call: Call) -> Call:
    """B rebuilt with A's dtype: what MMA709 (A and B of different types) is about."""
    dtype = call.a.resolved_dtype
    return replace(call, b=as_dtype(call.b, dtype)) if dtype else call


def _settled(call: Call) -> Call:
    """A call whose operand types and scales were just fixed, made to build: the block scales
    float4 needs and the accumulator A's type takes (scaled or not), where the call lacks them
    (int8 x fp8 into f32, fixed by B's type, needs an int32 `d`; bf16 with scales into f16,
    fixed by dropping them, an f32 one). Not applied when a masking mistake is fixed first
    (`unmasked_call`): that may be the finding's own mistake."""
    kind = facts.OPERAND_KINDS.get(call.a.mlir or "")
    if kind is None:
        return call
    scaled = bool(call.option("a_scale")) and bool(call.option("b_scale"))
    if (call.a.mlir or "") in facts.SCALED_ONLY_TYPES and not scaled:
        call, scaled = _with_scales(call, _accepted_scale_type(call)), True
    if (call.acc.mlir or "") not in (kind.scaled_accumulators if scaled else kind.accumulators):
        call = replace(call, acc=as_dtype(call.acc, _accepted_accumulator(call)))
    return call


def _scaled(call: Call) -> bool:
    return bool(call.option("a_scale")) and bool(call.option("b_scale"))


def swizzles(call: Call) -> tuple[int, int]:
    """A's and B's swizzles as the MMA gets them: Mosaic GPU's `a_swizzle=`/`b_swizzle=`, the
    Pallas refs' (one for both: B's), 128 when neither says."""
    b = int(call.option("b_swizzle") or call.b.swizzle or 128)
    a = int(call.option("a_swizzle") or call.a.swizzle or b)
    return a, b


def group_fixed(call: Call, code: str, m: int, n: int) -> Call | None:
    """MMA716-718, from the call's data. The reference kernels pass block scales only in
    Pallas, with e8m0 scales of the shapes the options give: other scaled calls have no case."""
    scaled = _scaled(call)
    if scaled and (call.api != "plgpu.tcgen05_mma" or call.option("a_scale_type") != "f8E8M0FNU"):
        return None
    if code == "MMA717":
        if not scaled:
            return None
        multiple = facts.V10_SCALED_N_MULTIPLE
        return _resized(call, m, -(-n // multiple) * multiple)
    a, b = logical_shape(call.a), logical_shape(call.b)
    bits = call.a.bits
    if a is None or b is None or bits is None:
        return None
    k = b[0]
    if code == "MMA718":
        blocks = [blk for (element, scale), accepted in facts.SCALE_BLOCKS.items()
                  if element == call.a.mlir and scale == call.option("a_scale_type")
                  for blk in accepted]
        if not scaled or not blocks or k % max(blocks):
            return None
        options = dict(call.options) | {"a_scale_columns": k // max(blocks),
                                        "b_scale_columns": k // max(blocks)}
        return replace(call, options=tuple(sorted(options.items())))
    if scaled:
        return None  # a block-scaled K group: the scales' shapes change with K
    fitting = swizzle_for_k(k, bits)
    if fitting is None:
        row = row_elements(min(SWIZZLES), bits)
        padded = -(-k // row) * row
        return replace(call, a=replace(call.a, shape=(a[0], padded)),
                       b=replace(call.b, shape=(padded, b[1])))
    options = dict(call.options)
    for side in ("a", "b"):
        if f"{side}_swizzle" in options:
            options[f"{side}_swizzle"] = fitting
    return replace(call, options=tuple(sorted(options.items())),
                   a=replace(call.a, swizzle=fitting if call.a.swizzle is not None else None),
                   b=replace(call.b, swizzle=fitting if call.b.swizzle is not None else None))


def unmasked_call(call: Call, masked_by: tuple[str, ...]) -> Call:
    """The call with the mistakes that mask the finding fixed first, in the order given, each
    by the change that fixes only it (MMA707-710: the scales or B's type, never the
    accumulator their full fix may also change, which may be the finding's mistake)."""
    for code in masked_by:
        call = _own_change(call, code) or fixed_call(call, code) or call
    return call
