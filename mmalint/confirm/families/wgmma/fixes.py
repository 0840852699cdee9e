"""The fixed call per MMA6xx rule, and the tiles the wgmma kernel needs (host side).

The accepted accumulators are `mmalint.facts.wgmma`'s (the table the rules read), so a fix
picks the accumulator jax takes from the same table the check used.
"""

from __future__ import annotations

from dataclasses import replace

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call, Layout
from mmalint.confirm.families.smem_cases import Tiles, as_dtype, logical_shape, with_operand
from mmalint.facts import wgmma as facts
from mmalint.facts.swizzle import SWIZZLES, row_elements, swizzle_for_k

FIX_DESCRIPTIONS: dict[str, str] = {
    "MMA202": "accumulator zeros made with is_signed=True for an integer type (none for a float)",
    "MMA601": "accumulator -> the one the operands take (f32; int32 is_signed=True for int8)",
    "MMA602": "accumulator -> int32, is_signed=True",
    "MMA603": "operands stored as int8 (data in [-128, 127]), which the s8 instruction reads "
              "correctly",
    "MMA604": "M rounded up to a multiple of 64, N to a multiple of 8 (at most 256)",
    "MMA605": "N rounded up to one ptxas takes for integer wgmma (8, 16, 24 or a multiple of 16)",
    "MMA606": "b -> a's dtype",
    "MMA607": "B staged as (N, K) and passed transposed, A as the (M, K) buffer (K-major "
              "operands)",
    "MMA608": "a float32 A read from SMEM, an int8 A with swizzle=64, A loaded in "
              "WGMMA_LAYOUT(_8BIT): whichever the call breaks",
    "MMA609": "target sm_90a",
    "MMA610": "accumulator -> (A's rows, B's columns), B's rows -> A's columns",
    "MMA611": "A's swizzle -> B's (the one jax takes for both)",
    "MMA612": "the swizzle -> the widest whose row divides K (64 bytes for K = 32 bf16), on A "
              "and B alike; K padded to the 32-byte row when none does",
}
# What jax reads from registers for A (`wgmma`: f16, bf16, i8, f8e5m2, f8e4m3fn).
REGISTER_A_TYPES = ("f16", "bf16", "i8", "f8E5M2", "f8E4M3FN")
# The register layouts wgmma takes for A, by operand width.
REGISTER_A_LAYOUT = {8: "WGMMA_LAYOUT_8BIT", 16: "WGMMA_LAYOUT"}
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
    if code in ("MMA202", "MMA601", "MMA602"):
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
    if code == "MMA607":
        return replace(call, a=replace(call.a, transposed=False),
                       b=replace(call.b, transposed=True))
    if code == "MMA608":
        return _register_a_fixed(call)
    if code == "MMA609":
        return replace(call, target_arch=facts.ARCH_NAME)
    if code == "MMA610":
        a, b = logical_shape(call.a), logical_shape(call.b)
        if a is None or b is None:
            return None
        return replace(call, acc=replace(call.acc, shape=(a[0], b[1])),
                       b=replace(call.b, shape=(a[1], b[1])))
    if code == "MMA611":
        swizzle = call.b.swizzle or call.option("swizzle") or TILES.swizzle
        return replace(call, a=replace(call.a, swizzle=swizzle))
    if code == "MMA612":
        return k_multiple_fixed(call)
    return None


def call_swizzle(call: Call) -> int:
    """The swizzle jax's `wgmma` is given: Mosaic GPU's `swizzle=`, Pallas's B's."""
    return int(call.option("swizzle") or call.b.swizzle or TILES.swizzle)


def k_multiple_fixed(call: Call) -> Call | None:
    """MMA612: the widest swizzle whose row divides K, for the call and both SMEM operands
    (Pallas) or its `swizzle=` (Mosaic GPU); K padded to a 32-byte row when none does."""
    a, b = logical_shape(call.a), logical_shape(call.b)
    bits = call.b.bits
    if a is None or b is None or bits is None:
        return None
    k = b[0]
    swizzle = swizzle_for_k(k, bits)
    if swizzle is None:
        padded = _round_up(k, row_elements(min(SWIZZLES), bits))
        return replace(call, a=replace(call.a, shape=(a[0], padded)),
                       b=replace(call.b, shape=(padded, b[1])))
    options = dict(call.options)
    if "swizzle" in options:
        options["swizzle"] = swizzle
    a_swizzle = swizzle if call.a.swizzle is not None else None
    return replace(call, options=tuple(sorted(options.items())),
                   a=replace(call.a, swizzle=a_swizzle), b=replace(call.b, swizzle=swizzle))


def register_a_problem(call: Call) -> str | None:
    """Which MMA608 mistake the call makes: `dtype`, `swizzle` or `layout` (None: none)."""
    if call.a.memory_space != "registers":
        return None
    if (call.a.mlir or "") not in REGISTER_A_TYPES:
        return "dtype"
    if call.a.mlir == "i8" and int(call.option("swizzle") or TILES.swizzle) == 32:
        return "swizzle"
    wanted = REGISTER_A_LAYOUT.get(call.a.bits or 16)
    if call.a.layout.name is not None and call.a.layout.name != wanted:
        return "layout"
    return None


def _register_a_fixed(call: Call) -> Call | None:
    problem = register_a_problem(call)
    if problem == "dtype":
        return replace(call, a=replace(call.a, memory_space="smem", layout=Layout()))
    if problem == "swizzle":
        return replace(call, options=tuple(sorted({**dict(call.options), "swizzle": 64}.items())))
    if problem == "layout":
        return replace(call, a=replace(call.a, layout=Layout(
            name=REGISTER_A_LAYOUT.get(call.a.bits or 16))))
    return None


def unmasked_call(call: Call, masked_by: tuple[str, ...]) -> Call:
    """The call with the mistakes that mask the finding fixed first."""
    for code in masked_by:
        call = fixed_call(call, code) or call
    return call
