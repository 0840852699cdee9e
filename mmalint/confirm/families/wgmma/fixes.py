"""The fixed call per MMA6xx rule, and the tiles the wgmma kernel needs (host side).

The accepted accumulators are `mmalint.facts.wgmma`'s (the table the rules read), so a fix
picks the accumulator jax takes from the same table the check used.
"""

from __future__ import annotations

from dataclasses import replace

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call
from mmalint.confirm.families.smem_cases import Tiles, as_dtype, logical_shape, with_operand
from mmalint.facts import wgmma as facts

FIX_DESCRIPTIONS: dict[str, str] = {
    "MMA601": "accumulator -> the one the operands take (f32; int32 is_signed=True for int8)",
    "MMA602": "accumulator -> int32, is_signed=True",
    "MMA603": "operands stored as int8 (data in [-128, 127]), which the s8 instruction reads "
              "correctly",
    "MMA604": "M rounded up to a multiple of 64, N to a multiple of 8 (at most 256)",
    "MMA605": "N rounded up to one ptxas takes for integer wgmma (8, 16, 24 or a multiple of 16)",
    "MMA606": "b -> a's dtype",
}
CODES = frozenset(FIX_DESCRIPTIONS)


def _integer(call: Call) -> bool:
    return dtypes.mlir_is_integer(call.b.mlir or call.a.mlir or "")


def _n_multiple(call: Call) -> int:
    n = (logical_shape(call.acc) or (0, 0))[1]
    return 16 if _integer(call) and n > 24 else facts.N_MULTIPLE


TILES = Tiles(default_m=64, default_n=128, m_multiple=facts.M_MULTIPLE, n_multiple=_n_multiple,
              arch=facts.ARCH, swizzle=facts.DEFAULT_SWIZZLE)


def _accepted_accumulator(call: Call) -> str:
    """The first accumulator jax takes for B's element type (f32, or int32 for int8)."""
    accepted = facts.ACCUMULATORS.get(call.b.mlir or "", ("f32",))[0]
    name = dtypes.dtype_for(accepted, "signed")
    return name or "float32"


def _resized(call: Call, m: int, n: int) -> Call:
    a, b = logical_shape(call.a), logical_shape(call.b)
    k = a[1] if a else (b[0] if b else 128)
    return replace(call, acc=replace(call.acc, shape=(m, n)),
                   a=replace(call.a, shape=(m, k)), b=replace(call.b, shape=(k, n)))


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def fixed_call(call: Call, code: str) -> Call | None:
    """The call with the finding's mistake fixed (None for a code with no reference case)."""
    m, n = logical_shape(call.acc) or (TILES.default_m, TILES.default_n)
    if code in ("MMA601", "MMA602"):
        return replace(call, acc=as_dtype(call.acc, _accepted_accumulator(call)))
    if code == "MMA603":
        return replace(call, a=as_dtype(call.a, "int8"), b=as_dtype(call.b, "int8"))
    if code == "MMA604":
        return _resized(call, _round_up(m, facts.M_MULTIPLE),
                        min(_round_up(n, facts.N_MULTIPLE), facts.N_MAX))
    if code == "MMA605":
        fixed_n = next((c for c in range(n, facts.N_MAX + 1) if facts.integer_n_ok(c)),
                       facts.N_MAX)
        return _resized(call, m, fixed_n)
    if code == "MMA606":
        return with_operand(call, "b", dtype=call.a.dtype, element_type=call.a.element_type,
                            signedness=call.a.signedness, data_dtype=None)
    return None


def unmasked_call(call: Call, masked_by: tuple[str, ...]) -> Call:
    """The call with the mistakes that mask the finding fixed first."""
    for code in masked_by:
        call = fixed_call(call, code) or call
    return call
