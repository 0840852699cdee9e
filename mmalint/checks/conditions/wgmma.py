"""The conditions of the warpgroup MMA family (`rules/checks/wgmma.toml`), over a normalized call.

jax's `wgmma` keys its dtype checks on **B's** element type (`wgmma.py` v11:385-409); the
accumulator is the fragment `WGMMAAccumulator` wraps (Mosaic GPU) or the `plgpu.ACC` ref / the
array `plgpu.ACC.init` was given (Pallas). Each condition answers True (jax fails the check, or
the numbers are wrong), False (it passes) or None (not decidable from what is known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmalint.checks.conditions.registry import (
    Conditions,
    Outcome,
    dtype_kind,
    element_bits,
    matrix_shape,
    one,
)
from mmalint.facts.swizzle import SWIZZLES, row_elements, swizzle_for_k, tiling_fits
from mmalint.facts.wgmma import (
    ACCUMULATOR_TEXT,
    ACCUMULATORS,
    ARCH_NAME,
    FP8_TYPES,
    M_MULTIPLE,
    N_MAX,
    N_MULTIPLE,
    integer_n_ok,
)

if TYPE_CHECKING:
    from mmalint.analysis.values import Layout
    from mmalint.checks.call import MmaCall, Operand


@dataclass(frozen=True)
class WgmmaTable:
    """What one API of the family accepts in one jax version (`[tables."API"."VERSION"]`)."""

    # The MLIR operand (B) element types jax's `wgmma` has an accumulator check for.
    operand_types: tuple[str, ...] = ()
    # The lowering semantics of a Pallas kernel that names none.
    default_semantics: str | None = None
    # Whether A and B may mix the e4m3/e5m2 fp8 types (jax 0.11 on).
    mixed_fp8: bool = True


CONDITIONS = Conditions("wgmma", WgmmaTable)
condition = CONDITIONS.condition

# How `WGMMAAccumulator.zero` marks the fragment it builds (`models/mosaic/wgmma.py`).
ZERO = "wgmma accumulator"
# How `plgpu.ACC.init(array)` marks its accumulator (`models/pallas/wgmma.py`).
INIT = "accumulator init"


def operands_unknown(call: MmaCall) -> bool:
    return call.b.element_type is None and call.a.element_type is None


@condition("zero-unsigned")
def _zero_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """`WGMMAAccumulator.zero(..., is_signed=False)`: TypeError before any wgmma."""
    acc = call.acc
    if acc.how != ZERO or acc.signedness is None:
        return one(None, "acc")
    return one(acc.signedness == "unsigned", "acc")


@condition("zero-is-signed")
def _zero_is_signed(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """`WGMMAAccumulator.zero(m, n, i32)` without `is_signed` (or a float type with it): the
    splat of zeros it makes is a FragmentedArray, whose `__init__` refuses it (TypeError),
    before any wgmma."""
    acc = call.acc
    if acc.how != ZERO or acc.signedness is None or acc.element_type is None:
        return one(None, "acc")
    return one(acc.is_signed_misplaced, "acc", is_signed=acc.is_signed_text, type=acc.element_type)


@condition("acc-allocated-unsigned")
def _allocated_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A `plgpu.ACC` of an unsigned or bool dtype: jax refuses to allocate it (`utils.is_signed`
    is False). An accumulator from `ACC.init` skips the check."""
    acc = call.acc
    if acc.how == INIT or acc.memory_space != "registers" or acc.how != "allocated":
        return one(None, "acc")
    kind = dtype_kind(acc)
    return one(None if kind is None else kind in ("uint", "bool"), "acc")


@condition("register-a-unsigned")
def _register_a_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An 8-bit integer A in registers that is not signed: `WGMMA with lhs of type u8`."""
    a, b = call.a, call.b
    if a.memory_space != "registers" or b.element_type is None:
        return one(None, "a")
    if b.element_type != "i8":
        return one(False, "a")
    if a.element_type != "i8" or a.signedness is None:
        return one(None, "a")
    return one(a.signedness != "signed", "a")


def _pair(call: MmaCall) -> bool | None:
    """Whether the accumulator type is one jax's `wgmma` refuses for B's element type."""
    b, acc = call.b, call.acc
    if b.element_type is None or acc.element_type is None:
        return None
    accepted = ACCUMULATORS.get(b.element_type)
    if accepted is None:
        return None  # an element type without a branch: `Unsupported element type`, not this
    if acc.element_type not in accepted:
        return True
    if b.element_type == "i8":
        if acc.how in (ZERO, "allocated"):
            return False  # an unsigned one fails where it is made (MMA602), before any wgmma
        if acc.signedness is None:
            return None
        return acc.signedness == "unsigned"
    return False


def _pair_fields(call: MmaCall) -> dict[str, str]:
    return {"accepted": ACCUMULATOR_TEXT.get(call.b.element_type or "", "?")}


@condition("acc-pair")
def _acc_pair(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """The accumulator type B's element type does not take (Mosaic GPU, Pallas's Lane path)."""
    return [Outcome(_pair(call), "acc", _pair_fields(call))]


def _int_b_float_acc(call: MmaCall) -> bool | None:
    b, acc = call.b, call.acc
    if b.element_type is None or acc.element_type is None:
        return None
    return b.is_int and acc.is_float


@condition("wg-int-float-acc")
def _wg_int_float_acc(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """Warpgroup lowering forces `is_signed=True` on the accumulator of integer operands: a
    floating accumulator fails as the fragment is built."""
    return one(_int_b_float_acc(call), "acc", type=call.acc.element_type or "?",
                **_pair_fields(call))


@condition("wg-acc-pair")
def _wg_acc_pair(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """The pair check as Warpgroup lowering reaches it: integer operands with a floating
    accumulator failed earlier; a bf16 accumulator fails in the verifier (not predicted)."""
    mixed = _int_b_float_acc(call)
    if mixed is None or call.acc.element_type == "bf16":
        return [Outcome(None, "acc")]
    if mixed:
        return [Outcome(False, "acc")]
    if call.b.element_type == "i8" and call.acc.element_type == "i32":
        # The rule builds the accumulator signed whatever its dtype: an `ACC.init` of a uint32
        # array (which skips the allocation's unsigned check) passes, with the same bits.
        return [Outcome(False, "acc")]
    return [Outcome(_pair(call), "acc", _pair_fields(call))]


@condition("wg-bf16-acc-init")
def _wg_bf16_acc_init(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A bfloat16 accumulator from `plgpu.ACC.init(x)` for floating operands under Warpgroup
    lowering: the dialect's verifier refuses it (seen on an H200, mma-facts §11.1); one from
    a `plgpu.ACC` allocation was not seen (unknown)."""
    acc, b = call.acc, call.b
    if acc.how != INIT or acc.element_type is None or b.element_type is None:
        return one(None, "acc")
    if b.element_type not in ACCUMULATORS or b.element_type == "i8":
        return one(False, "acc")
    return one(acc.element_type == "bf16", "acc", **_pair_fields(call))


@condition("smem-unsigned")
def _smem_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """uint8 data read by wgmma from SMEM: jax emits `.s8` whatever the data (wgmma.py v11:242)."""
    outcomes = []
    for role in ("a", "b"):
        op = call.operands[role]
        if op.memory_space != "smem":
            continue
        outcomes.append(Outcome(None if op.dtype is None else op.dtype == "uint8", role))
    hits = [o for o in outcomes if o.status]
    return hits if hits else [Outcome(None if any(o.status is None for o in outcomes) else False, "a")]


@condition("register-a-unsigned-silent")
def _register_a_unsigned_silent(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """uint8 A in registers under Warpgroup lowering, which forces `is_signed=True`."""
    a = call.a
    if a.memory_space != "registers" or a.dtype is None:
        return one(None, "a")
    return one(a.dtype == "uint8", "a")


@condition("integer-n")
def _integer_n(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An integer wgmma whose N passes jax's `n % 8` check and is not an N ptxas accepts."""
    if call.b.element_type != "i8":
        return one(None if call.b.element_type is None else False, "acc")
    shape = call.acc.shape
    n = shape[1] if shape is not None and len(shape) == 2 else None
    if n is None:
        return one(None, "acc")
    if n % N_MULTIPLE or n > N_MAX:
        return one(False, "acc")
    return one(not integer_n_ok(n), "acc", n_value=str(n))


def mismatch(a: str | None, b: str | None, a_type: str | None, b_type: str | None,
             table: WgmmaTable) -> bool | None:
    """Whether A and B (MLIR types, or Pallas dtypes, `a` and `b`) fail the element type check:
    they must be one type, but for an e4m3/e5m2 pair where the jax mixes them."""
    if a is None or b is None:
        return None
    if a == b:
        return False
    return not (table.mixed_fp8 and a_type in FP8_TYPES and b_type in FP8_TYPES)


@condition("dtype-mismatch")
def _dtype_mismatch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A and B of different MLIR element types (int8 and uint8 are both i8)."""
    a, b = call.a, call.b
    return one(mismatch(a.element_type, b.element_type, a.element_type, b.element_type, table), "a")


@condition("pallas-dtype-mismatch")
def _pallas_dtype_mismatch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A and B of different dtypes, as Pallas compares them when the call is traced."""
    a, b = call.a, call.b
    return one(mismatch(a.dtype, b.dtype, a.element_type, b.element_type, table), "a")


@condition("zero-shape")
def _zero_shape(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An accumulator of zeros whose M is not a multiple of 64 or N of 8 (`zero`, and the
    `plgpu.ACC` allocation under Lane semantics, which calls it)."""
    if call.acc.how not in (ZERO, "allocated"):
        return one(None, "acc")
    mn = matrix_shape(call.acc.shape)
    if mn is None:
        return one(None, "acc")
    m, n = mn
    return one(bool(m % M_MULTIPLE or n % N_MULTIPLE), "acc", m_value=str(m), n_value=str(n))


@condition("n-range")
def _n_range(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """N (the accumulator's) above 256 or not a multiple of 8; M a multiple of 64, so that
    the checks before this one pass."""
    mn = matrix_shape(call.acc.shape)
    if mn is None:
        return one(None, "acc")
    m, n = mn
    if m % M_MULTIPLE:
        return one(None, "acc")
    return one(bool(n > N_MAX or n % N_MULTIPLE), "acc", n_value=str(n))


# ---------------------------------------------------------------- operand majorness, register A


def _tiled_rank(call: MmaCall) -> int:
    """The rank jax's `wgmma` reads an SMEM operand at: Mosaic GPU takes the tiled 4-D memref
    (`mma_utils.tiled_memref_shape`), Pallas the 2-D ref it tiles itself."""
    return 4 if call.frontend == "mosaic" else 2


@condition("not-k-major")
def _not_k_major(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An 8- or 32-bit SMEM operand whose contraction axis is not the contiguous one: B seen
    as the (K, N) row-major buffer it was allocated as, or A through a transposed view of a
    (K, M) buffer. jax transposes only 16-bit operands (`wgmma_m64`, `supports_transpose`)."""
    bits = element_bits(call.b.element_type)
    if bits is None:
        return one(None, "b")
    if bits == 16:
        return one(False, "b")
    outcomes = []
    for role, wrong in (("b", "plain"), ("a", "transposed")):
        op = call.operands[role]
        if op.memory_space != "smem":
            continue
        if op.view is None or op.shape is None or len(op.shape) != _tiled_rank(call):
            outcomes.append(Outcome(None, role))
            continue
        outcomes.append(Outcome(op.view == wrong, role, {"bits": str(bits), "major": _MAJOR[role]}))
    hits = [o for o in outcomes if o.status]
    if hits:
        return hits
    return [Outcome(None if any(o.status is None for o in outcomes) else False, "b")]


# How each operand is laid out when it is not K-major.
_MAJOR = {"a": "M-major (a transposed view of a (K, M) buffer)", "b": "N-major (the (K, N) buffer as allocated)"}
# The element types jax's `wgmma` takes for A in registers (`wgmma.py` v11:351).
REGISTER_A_TYPES = ("f16", "bf16", "i8", "f8E5M2", "f8E4M3FN")


@condition("register-a-dtype")
def _register_a_dtype(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A in registers of an element type wgmma cannot read from registers (f32: tf32 A must
    come from SMEM)."""
    a = call.a
    if a.memory_space != "registers" or a.element_type is None:
        return one(None, "a")
    return one(a.element_type not in REGISTER_A_TYPES, "a",
                problem=f"as {a.display}, which wgmma reads only from SMEM (registers take float16, "
                        "bfloat16, int8 and the fp8 types)")


@condition("register-a-swizzle-32")
def _register_a_swizzle_32(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """int8 A in registers with `swizzle=32`: jax refuses it (ptxas drops MMA instructions)."""
    a = call.a
    swizzle = call.options.get("swizzle")
    if a.memory_space != "registers" or a.element_type is None or swizzle is None:
        return one(None, "a")
    return one(a.element_type == "i8" and swizzle == 32, "a",
                problem="as int8 with swizzle=32, which jax refuses (ptxas drops instructions of it)")


# Register layouts jax's `wgmma_m64` refuses for A: the warp-level MMA operand layouts, an MMA
# accumulator layout of fewer than 4 warps (WGMMA_LAYOUT is the m_warps=4 one), a splat.
_WRONG_A_LAYOUTS = ("mma_lhs", "mma_rhs", "splat")


@condition("register-a-layout")
def _register_a_layout(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A in registers in a layout other than `WGMMA_LAYOUT` / `WGMMA_LAYOUT_8BIT`."""
    a = call.a
    layout = a.layout
    if a.memory_space != "registers" or layout is None:
        return one(None, "a")
    if layout.kind in _WRONG_A_LAYOUTS:
        return one(True, "a", problem=_layout_problem(layout))
    if layout.kind == "mma_acc" and layout.m_warps is not None:
        return one(layout.m_warps != 4, "a", problem=_layout_problem(layout))
    if layout.kind == "wgmma_8bit":
        return one(False, "a")
    return one(None, "a")


def _layout_problem(layout: Layout) -> str:
    return f"in {_layout_text(layout)}, not WGMMA_LAYOUT (16-bit) or WGMMA_LAYOUT_8BIT (8-bit)"


def _layout_text(layout: Layout) -> str:
    if layout.name:
        return layout.name
    if layout.kind == "splat":
        return "a splat layout"
    names = {"mma_lhs": "MMALayouts(...).lhs", "mma_rhs": "MMALayouts(...).rhs", "mma_acc": "MMALayouts(...).acc"}
    text = names.get(layout.kind, layout.kind)
    return f"{text} with m_warps={layout.m_warps}" if layout.m_warps is not None else text


# ---------------------------------------------------------------- target (MMA6xx)


@condition("target-arch")
def _target_arch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A wgmma compiled for a GPU other than sm_90a: the instruction exists only there."""
    arch = call.target_arch_name
    if arch is None:
        return one(None, "acc")
    return one(arch != ARCH_NAME, "acc", target_arch=arch, needs=ARCH_NAME)


# ---------------------------------------------------------------- operand shapes


def _logical(call: MmaCall, op: Operand) -> tuple[int, int] | None:
    """The (rows, columns) jax's `wgmma` sees: a fragment's shape; a Pallas ref's; a Mosaic GPU
    tiled memref's `(s0 * s2, s1 * s3)` (`mma_utils.tiled_memref_shape`)."""
    shape = op.shape
    if shape is None or any(d is None for d in shape):
        return None
    dims = [d for d in shape if d is not None]
    if op.memory_space == "registers" or call.frontend == "pallas":
        return (dims[0], dims[1]) if len(dims) == 2 else None
    if len(dims) != 4:
        return None
    return dims[0] * dims[2], dims[1] * dims[3]


def _text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


@condition("pallas-shapes")
def _pallas_shapes(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """`plgpu.wgmma(acc, a, b)` whose acc (M, N), a (M, K) and b (K, N) disagree."""
    acc, a, b = (_logical(call, op) for op in (call.acc, call.a, call.b))
    if acc is None or a is None or b is None:
        return one(None, "acc")
    (m, n), (m2, k), (k2, n2) = acc, a, b
    bad = m != m2 or n != n2 or k != k2
    return one(bad, "acc", a_mk=_text(a), b_kn=_text(b), acc_mn=_text(acc))


@condition("contraction-mismatch")
def _contraction(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A's K (its columns) is not B's K (its rows)."""
    a, b = _logical(call, call.a), _logical(call, call.b)
    if a is None or b is None:
        return one(None, "a")
    return one(a[1] != b[0], "a", k_a=str(a[1]), k_b=str(b[0]), a_mk=_text(a), b_kn=_text(b),
                acc_mn="?")


@condition("acc-shape-mismatch")
def _acc_shape(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """The accumulator is not (A's M, B's N)."""
    acc, a, b = (_logical(call, op) for op in (call.acc, call.a, call.b))
    if acc is None or a is None or b is None or a[1] != b[0]:
        return one(None, "acc")
    expected = (a[0], b[1])
    return one(acc != expected, "acc", expected=_text(expected), got=_text(acc), a_mk=_text(a),
                b_kn=_text(b), acc_mn=_text(acc))


@condition("swizzle-mismatch")
def _swizzle_mismatch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A and B in SMEM declared with different `SwizzleTransform`s (Pallas reads the swizzle of
    the instruction from the refs; Mosaic GPU takes one `swizzle=` for both)."""
    a, b = call.a, call.b
    if a.memory_space != "smem" or b.memory_space != "smem":
        return one(None if a.memory_space is None else False, "b")
    if a.swizzle is None or b.swizzle is None:
        return one(None, "b")
    return one(a.swizzle != b.swizzle, "b", a_swizzle=str(a.swizzle), b_swizzle=str(b.swizzle))


# ---------------------------------------------------------------- K and the swizzle (MMA612)


def _call_swizzle(call: MmaCall, bits: int) -> int | None:
    """The swizzle jax's `wgmma` is given, when every check before K lets it through: Mosaic
    GPU's `swizzle=`; Pallas's B's `SwizzleTransform`, with a tiling that fits it (Lane matches
    the transforms, Warpgroup's layout inference accepts only that tiling), A's the same when A
    is in SMEM (Lane checks A's tiling and that B's swizzle matches A's)."""
    if call.frontend == "mosaic":
        swizzle = call.options.get("swizzle")
        return swizzle if isinstance(swizzle, int) and swizzle in SWIZZLES else None
    b = call.b
    if b.memory_space != "smem" or b.swizzle not in SWIZZLES or b.swizzle is None:
        return None
    if not tiling_fits(b.tiling, b.swizzle, bits):
        return None
    a = call.a
    if a.memory_space == "smem":
        a_bits = element_bits(a.element_type)
        if a.swizzle != b.swizzle or a_bits is None or not tiling_fits(a.tiling, b.swizzle, a_bits):
            return None
    return b.swizzle


@condition("k-multiple")
def _k_multiple(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """K (B's rows) not a multiple of the elements one swizzle row holds (`swizzle // itemsize`
    of B's type): jax steps through K a swizzle row at a time. Silent unless every check jax
    makes before it passes, or fails in a way whose fix leaves K, B's type and the swizzle as
    they are (the accumulator's type or shape, N): A and B of one element width and one K,
    M a multiple of 64, int8 A in registers not at swizzle=32 (whose fix changes the swizzle)."""
    a, b = call.a, call.b
    bits = element_bits(b.element_type)
    if bits is None or a.element_type is None:
        return one(None, "b")
    if element_bits(a.element_type) != bits:
        return one(None, "b")  # a dtype mismatch first (MMA606); fixing it may change K's unit
    if call.frontend == "pallas" and a.dtype != b.dtype:
        return one(None, "b")
    swizzle = _call_swizzle(call, bits)
    shape_a, shape_b = _logical(call, a), _logical(call, b)
    if swizzle is None or shape_a is None or shape_b is None:
        return one(None, "b")
    (m, k_a), (k, _n) = shape_a, shape_b
    if k_a != k or m % M_MULTIPLE:
        return one(None, "b")
    if a.memory_space == "registers" and a.element_type == "i8" and swizzle == 32:
        return one(None, "b")
    if call.frontend == "pallas" and a.memory_space == "smem" and a.view != "transposed":
        # A (M, K) tiled (8, swizzle // itemsize) in SMEM: K is a whole number of rows already.
        return one(False if a.view == "plain" else None, "b")
    group = row_elements(swizzle, bits)
    if k % group == 0:
        return one(False, "b")
    return one(True, "b", k_value=str(k), k_group=str(group), swizzle=str(swizzle),
                remedy=_k_remedy(call, k, bits))


def _k_remedy(call: MmaCall, k: int, bits: int) -> str:
    fitting = swizzle_for_k(k, bits)
    if fitting is None:
        return (f"pad K to a multiple of {row_elements(min(SWIZZLES), bits)} (the elements of the "
                "smallest swizzle, 32 bytes)")
    tile = f"(8, {row_elements(fitting, bits)})"
    if call.frontend == "pallas":
        return (f"declare B's SMEM (and A's, when it is in SMEM) with "
                f"`plgpu.SwizzleTransform({fitting})` and `plgpu.TilingTransform({tile})`")
    return (f"pass `swizzle={fitting}` and stage A and B with that swizzle (tiles {tile}, in "
            "their SMEM shapes and copies)")
