"""The conditions of the tcgen05 family (`rules/checks/tcgen05.toml`), over a normalized call.

The call's `acc` is tcgen05's `d` (the TMEM accumulator); `a` and `b` are its operands. jax's
`tcgen05.mma()` keys every dtype check on A's element type, after checking that A and B have the
same one (or, from jax 0.11, two fp8 types): a condition here answers only when both are known
and agree, so the message it predicts is the one jax reaches. Pallas's `plgpu.tcgen05_mma`
checks shapes only and lowers (under either semantics) into the same `tcgen05.mma()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mmalint.checks.conditions.registry import Conditions, Outcome, element_bits, matrix_shape, one
from mmalint.facts.tcgen05 import (
    A_IN_TMEM_M,
    ANY_SCALE_TYPES,
    ARCH_FAMILY,
    ARCH_NAMES,
    F4_TYPES,
    FP8_TYPES,
    INTEGER_N_FACTOR,
    KIND_I8_ARCH_NAMES,
    N_MULTIPLE,
    NO_KIND_I8,
    OPERAND_KINDS,
    SCALABLE_TYPES,
    SCALE_TYPES,
    SUPPORTED_M,
    TMEM_COLUMN_MULTIPLE,
    TMEM_MAX_PACKING,
    full_packing,
)

if TYPE_CHECKING:
    from mmalint.checks.call import MmaCall


@dataclass(frozen=True)
class Tcgen05Table:
    """What one API of the family accepts in one jax version (`[tables."API"."VERSION"]`)."""

    # The MLIR element types `tcgen05.mma()` has a branch for (the rest: "Unsupported element type").
    operand_types: tuple[str, ...] = ()
    # From jax 0.11, A and B may be two different fp8 types (e4m3 x e5m2).
    mixed_fp8: bool = False
    # How jax 0.11+ names a mixed pair in its messages: `(f8E4M3FN, f8E5M2)`; 0.10 prints A's.
    pair_in_messages: bool = False
    # The lowering semantics of a Pallas kernel that names none (the checks do not depend on it).
    default_semantics: str | None = None
    # How jax prints `tcgen05.tmem_default_layout(packing)` (the A layout message of MMA714),
    # `{packing}` for the packing; 0.12's `TMEMLayout` repr has a field more.
    tmem_default_layout: str = ""
    # jax 0.10 derives the packing A in TMEM must have from B's element type (v10:217); 0.11+
    # from A's own.
    a_packing_from_b: bool = False
    # jax 0.11 on derives the scale block from K // A's scale columns (and checks it per operand
    # type); jax 0.10 takes it from the scale type (32 for e8m0, else 16).
    scale_block_from_columns: bool = True


CONDITIONS = Conditions("tcgen05", Tcgen05Table)
condition = CONDITIONS.condition


def call_option(call: MmaCall, name: str) -> Any:
    """A recorded option as a JSON value; None when unknown or not recorded."""
    return call.options.get(name)


def is_scaled(call: MmaCall) -> bool | None:
    """Whether the call is block-scaled: both scales given (one alone raises first)."""
    a, b = call_option(call, "a_scale"), call_option(call, "b_scale")
    if a is None or b is None or a != b:
        return None
    return bool(a)


def operand_element(call: MmaCall, table: Tcgen05Table) -> tuple[str, str] | None:
    """A's element type and how jax's messages name the operands' type, when A and B are known
    and pass jax's same-element-type check; None otherwise."""
    a, b = call.a.element_type, call.b.element_type
    if a is None or b is None:
        return None
    if a == b:
        return a, a
    if table.mixed_fp8 and a in FP8_TYPES and b in FP8_TYPES:
        return a, f"({a}, {b})" if table.pair_in_messages else a
    return None


def _accumulator(call: MmaCall, element: str, scaled: bool) -> list[Outcome]:
    kind = OPERAND_KINDS.get(element)
    d = call.acc.element_type
    if kind is None or d is None:
        return one(None)
    accepted = kind.scaled_accumulators if scaled else kind.accumulators
    if not accepted:
        return one(False)  # scaling refused (or required): another check's finding
    names = " or ".join(_NUMPY_NAMES[t] for t in accepted)
    return one(d not in accepted, "acc", accepted=names)


# How the rules name D's accepted element types.
_NUMPY_NAMES = {"f32": "float32", "f16": "float16", "i32": "int32"}


def _acc_check(elements: frozenset[str], scaled_case: bool | None = False) -> Any:
    """A check of D's element type for A's `elements`: unscaled calls (`scaled_case` False),
    block-scaled ones (True)."""

    def check(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
        found = operand_element(call, table)
        scaled = is_scaled(call)
        if found is None or scaled is None:
            return one(None)
        element, elem = found
        if element not in elements or scaled != scaled_case:
            return one(False)
        outcome = _accumulator(call, element, scaled)[0]
        return [Outcome(outcome.status, outcome.subject, {**outcome.fields, "elem": elem})]

    return check


# f32 and bf16: f32 only (v11:298); f16 and fp8: f32 or f16 (v11:308, 317); block-scaled fp8
# and f4: f32 only (v11:322, 332); i8: s32 only (v11:342).
condition("acc-f32-only")(_acc_check(frozenset({"f32", "bf16"})))
condition("acc-f32-or-f16")(_acc_check(frozenset({"f16"}) | FP8_TYPES))
condition("scaled-acc-f32")(_acc_check(FP8_TYPES | F4_TYPES, scaled_case=True))
condition("acc-s32")(_acc_check(frozenset({"i8"})))


@condition("scales-one-side")
def _scales_one_side(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """`a_scale=` without `b_scale=`, or the reverse."""
    a, b = call_option(call, "a_scale"), call_option(call, "b_scale")
    if a is True and b is False:
        return one(True, "a", given="a_scale", missing="b_scale")
    if b is True and a is False:
        return one(True, "b", given="b_scale", missing="a_scale")
    if a is None or b is None:
        return one(None)
    return one(False)


@condition("tf32-not-lowered")
def _tf32_not_lowered(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """f32 operands into an f32 accumulator pass every check of `mma()`, then `_do_mma` has no
    instruction kind for them."""
    found = operand_element(call, table)
    if found is None or is_scaled(call) is not False or call.acc.element_type is None:
        return one(None)
    return one(found[0] == "f32" and call.acc.element_type == "f32", "a", mma_type="tf32")


@condition("n-multiple")
def _n_multiple(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """D's N per CTA is not a multiple of 8 (16 collective), twice that for s32, at M=128 or
    collective M=64 (1 CTA M=64 splits N into two lane groups after a swizzle check)."""
    shape = call.acc.shape
    collective = call_option(call, "collective")
    if shape is None or len(shape) != 2 or None in shape or collective is None or call.acc.element_type is None:
        return one(None)
    m, n_total = shape
    assert m is not None and n_total is not None
    if m != 128 and not (m == 64 and collective):
        return one(None)
    ctas = 2 if collective else 1
    if n_total % ctas:
        return one(None)
    n = n_total // ctas
    multiple = N_MULTIPLE[bool(collective)]
    mode = "2 CTA" if collective else "1 CTA"
    if call.acc.element_type == "i32":
        multiple *= INTEGER_N_FACTOR
        mode += " integer"
    return one(n % multiple != 0, "acc", n_per_cta=str(n), multiple=str(multiple), mode=mode)


@condition("unsigned-as-signed")
def _unsigned_as_signed(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """uint8 operands: the instruction descriptor always says s8, so values >= 128 are read as
    negative. Only when the call builds (int8-class operands into an int32 accumulator)."""
    if call.acc.element_type != "i32" or operand_element(call, table) is None:
        return one(None)
    outcomes: list[Outcome] = []
    for role in ("a", "b"):
        dtype = call.operands[role].dtype
        outcomes.append(Outcome(None if dtype is None else dtype == "uint8", role))
    return outcomes


def operands_unknown(call: MmaCall) -> bool:
    """Nothing is known of A's element type: no check on it can be replayed."""
    return call.a.element_type is None


@condition("tmem-rows")
def _tmem_rows(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """D (per CTA) has rows other than 128 or 64: TMEM cannot lay it out, so allocating it fails
    before the MMA (whose own M check it never reaches)."""
    shape = call.acc.shape
    if shape is None or len(shape) != 2 or shape[0] is None:
        return one(None)
    return one(shape[0] not in SUPPORTED_M, "acc", m_value=str(shape[0]))


# ---------------------------------------------------------------- operand types (MMA707-709)

# How the rules name MLIR element types (jax's messages print the MLIR names).
_DTYPE_NAMES = {
    "f32": "float32", "bf16": "bfloat16", "f16": "float16", "f8E4M3FN": "float8_e4m3fn",
    "f8E5M2": "float8_e5m2", "f4E2M1FN": "float4_e2m1fn", "i8": "int8",
    "f8E8M0FNU": "float8_e8m0fnu",
}


def type_name(element: str) -> str:
    return _DTYPE_NAMES.get(element, element)


@condition("operand-types-differ")
def _operand_types_differ(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A and B of different element types, other than an e4m3/e5m2 pair (`mixed-fp8-unsupported`).
    int8 and uint8 are one MLIR type (i8): not a mismatch here (MMA705 reads them)."""
    a, b = call.a.element_type, call.b.element_type
    if a is None or b is None:
        return one(None)
    return one(a != b and not (a in FP8_TYPES and b in FP8_TYPES), "b")


@condition("mixed-fp8-unsupported")
def _mixed_fp8_unsupported(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """An e4m3 x e5m2 pair, in a jax that does not mix fp8 types yet (0.10)."""
    a, b = call.a.element_type, call.b.element_type
    if a is None or b is None:
        return one(None)
    pair = a != b and a in FP8_TYPES and b in FP8_TYPES
    return one(pair and not table.mixed_fp8, "b")


def _scaled_element(call: MmaCall, table: Tcgen05Table) -> tuple[str, str, bool] | None:
    """A's element type, how jax names it, and whether the call is block-scaled; None when one
    of them is unknown or A and B fail the element type check first."""
    found = operand_element(call, table)
    scaled = is_scaled(call)
    if found is None or scaled is None:
        return None
    return found[0], found[1], scaled


@condition("scaling-unsupported")
def _scaling_unsupported(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """Block scales passed for an operand type without a block-scaled MMA (f32, bf16, f16, i8)."""
    found = _scaled_element(call, table)
    if found is None:
        return one(None)
    element, elem, scaled = found
    if element not in OPERAND_KINDS:
        return one(None)
    if element == "f32" and scaled and call_option(call, "sparse") is not False:
        return one(None)  # "Sparse MMA unsupported for f32" comes first (v11:292), not replayed
    return one(scaled and element not in SCALABLE_TYPES, "a", elem=elem)


@condition("f4-needs-scales")
def _f4_needs_scales(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """float4_e2m1fn operands without block scales: Mosaic GPU has only the block-scaled FP4 MMA."""
    found = _scaled_element(call, table)
    if found is None:
        return one(None)
    element, elem, scaled = found
    return one(element in F4_TYPES and not scaled, "a", elem=elem)


# ---------------------------------------------------------------- scale types (MMA710)


def scale_types(call: MmaCall) -> tuple[str | None, str | None]:
    return call_option(call, "a_scale_type"), call_option(call, "b_scale_type")


def _scale_outcome(problem: str, remedy: str, **fields: str) -> list[Outcome]:
    return one(True, "a", problem=problem, remedy=remedy, **fields)


@condition("a-scale-type-any")
def _a_scale_type_any(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.10: A's scale is neither float8_e8m0fnu nor float8_e4m3fn (checked before B's)."""
    found = _scaled_element(call, table)
    a_scale, _ = scale_types(call)
    if found is None:
        return one(None)
    if not found[2] or found[0] not in SCALABLE_TYPES:
        return one(False)
    if a_scale is None:
        return one(None)
    if a_scale in ANY_SCALE_TYPES:
        return one(False)
    return _scale_outcome(
        f"block scales must be float8_e8m0fnu or float8_e4m3fn, but `a_scale` is {type_name(a_scale)}",
        "allocate the scales as float8_e8m0fnu", scale_type=a_scale,
    )


@condition("b-scale-type-differs")
def _b_scale_type_differs(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A's and B's scales of different element types."""
    found = _scaled_element(call, table)
    a_scale, b_scale = scale_types(call)
    if found is None or not found[2] or found[0] not in SCALABLE_TYPES:
        return one(None if found is None else False)
    if a_scale is None or b_scale is None:
        return one(None)
    if a_scale == b_scale:
        return one(False)
    return [Outcome(True, "b", {
        "problem": f"`a_scale` is {type_name(a_scale)} but `b_scale` is {type_name(b_scale)}:"
        " both scales must be of one type",
        "remedy": f"allocate both scales as {type_name(a_scale)}",
        "a_scale_type": a_scale, "b_scale_type": b_scale,
    })]


def _scale_type_check(elements: frozenset[str]) -> Any:
    """A's scale is not of a type `elements` take (`facts.tcgen05.SCALE_TYPES`)."""

    def check(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
        found = _scaled_element(call, table)
        a_scale, _ = scale_types(call)
        if found is None:
            return one(None)
        element, _elem, scaled = found
        if not scaled or element not in elements:
            return one(False)
        if a_scale is None:
            return one(None)
        accepted = SCALE_TYPES[element]
        if a_scale in accepted:
            return one(False)
        names = " or ".join(type_name(t) for t in accepted)
        return _scale_outcome(
            f"{type_name(element)} operands take {names} block scales,"
            f" but `a_scale` is {type_name(a_scale)}",
            f"allocate the scales as {type_name(accepted[0])}", scale_type=a_scale,
        )

    return check


condition("fp8-scale-type")(_scale_type_check(FP8_TYPES))


@condition("fp8-scale-type-v10")
def _fp8_scale_type_v10(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.10: fp8 operands with float8_e4m3fn scales. It takes those scales as one per 16
    elements of K (v10:352) and checks A's scale shape (128, K // 16) before it emits the
    instruction, which then refuses them: the finding speaks only when that shape check passes
    (otherwise that is what jax raises, and it is not replayed here)."""
    outcomes = _scale_type_check(FP8_TYPES)(call, table)
    if not outcomes[0].status:
        return outcomes
    columns = call_option(call, "a_scale_columns")
    shape = call.a.shape
    if columns is None or shape is None or len(shape) != 2 or shape[1] is None:
        return one(None)
    block = 16 if outcomes[0].fields.get("scale_type") == "f8E4M3FN" else None
    if block is None or shape[1] % block or shape[1] // block != columns:
        return one(None)
    return outcomes
condition("f4-scale-type")(_scale_type_check(F4_TYPES))


# ---------------------------------------------------------------- target GPU (MMA711)


@condition("tcgen05-arch")
def _tcgen05_arch(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """The target GPU has no `tcgen05.mma` (anything but sm_100a's family); silent unless the
    target was given (the family takes no default GPU)."""
    if call.target_arch is None:
        return one(None)
    missing = call.target_arch not in ARCH_FAMILY
    return one(missing, "acc", feature="`tcgen05.mma`", needs=ARCH_NAMES)


@condition("kind-i8-arch")
def _kind_i8_arch(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """int8 operands (`.kind::i8`) on sm_103a, which has tcgen05 but not its integer kind."""
    element = call.a.element_type
    if call.target_arch is None or element is None:
        return one(None)
    if element != "i8" or call.target_arch not in ARCH_FAMILY:
        return one(False)
    return one(
        call.target_arch in NO_KIND_I8, "a", feature="integer `tcgen05.mma` (`.kind::i8`)",
        needs=KIND_I8_ARCH_NAMES,
    )


# ---------------------------------------------------------------- A in TMEM (MMA713-715)
#
# An `a` allocated in tensor memory (`plgpu.TMEM`, `mgpu.TMEM`, a `TMEMRef`): `tcgen05.mma()`
# checks it before anything else of A (v10:196-224 v11:201-225 v12:234-258). A whose memory
# space is not known (a parameter, a ref of unknown allocation) is silent in every one.


def _a_in_tmem(call: MmaCall) -> bool | None:
    """Whether A is in TMEM: True, False (SMEM), None when not known."""
    space = call.a.memory_space
    return None if space is None else space == "tmem"


def _semantics_unsure(call: MmaCall) -> bool:
    """A Pallas call of unknown lowering semantics whose A packing is not known to be right:
    under Warpgroup, layout inference would fail first (`wg-a-tmem-packing`), under Lane the
    MMA's own check; which one jax raises is not known."""
    if call.frontend != "pallas" or call.semantics is not None:
        return False
    valid = _valid_packing(call)
    return valid is None or valid[0] != valid[1]


@condition("a-tmem-scaled-sparse")
def _a_tmem_scaled_sparse(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A in TMEM with block scales and sparsity metadata: jax has no such MMA (every version)."""
    tmem, scaled, sparse = _a_in_tmem(call), is_scaled(call), call_option(call, "sparse")
    if tmem is False or scaled is False or sparse is False:
        return one(False)
    if tmem is None or scaled is None or sparse is None or _semantics_unsure(call):
        return one(None)
    return one(True, "a", what="block-scaled sparse", target_jax=call.version, version_help="")


@condition("a-tmem-scaled")
def _a_tmem_scaled(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """jax 0.10: A in TMEM with block scales (not sparse; sparse raises first, above)."""
    tmem, scaled, sparse = _a_in_tmem(call), is_scaled(call), call_option(call, "sparse")
    if tmem is False or scaled is False or sparse is True:
        return one(False)
    if tmem is None or scaled is None or sparse is None or _semantics_unsure(call):
        return one(None)
    return one(True, "a", what="block-scaled", target_jax=call.version,
                version_help=", or target jax 0.11 or newer, which implements it with A in TMEM")


def _allocatable_rows(call: MmaCall, rows: int, cols: int) -> bool | None:
    """Whether a TMEM ref of A's rows and columns can be allocated in its packing, so that
    the MMA is reached: 128 rows always; 64 rows (a half-lane layout) need columns a multiple
    of 16 and at most half of them per packed cell (`tmem_half_lane_layout`)."""
    packing = call.a.tmem_packing
    if rows == 128:
        return True
    if rows != 64:
        return False
    if packing is None:
        return None
    limit = TMEM_MAX_PACKING if call_option(call, "collective") else cols // 2
    return cols % TMEM_COLUMN_MULTIPLE == 0 and packing <= limit


@condition("a-tmem-m128")
def _a_tmem_m128(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A in TMEM with M other than 128: only the 64-row TMEM ref (which can be allocated) is
    claimed; other rows fail to allocate first (MMA706's message, when they are the
    accumulator's). Pallas checks the accumulator's rows against A's first, when it traces."""
    tmem, shape = _a_in_tmem(call), matrix_shape(call.a.shape)
    if tmem is False:
        return one(False)
    if tmem is None or shape is None:
        return one(None)
    rows, cols = shape
    if rows == A_IN_TMEM_M:
        return one(False)
    allocatable = _allocatable_rows(call, rows, cols)
    if not allocatable or _semantics_unsure(call):
        return one(None)
    if call.frontend == "pallas":
        d = matrix_shape(call.acc.shape)
        if d is None or d[0] != rows:
            return one(None)  # "Accumulator and LHS have incompatible shapes" first
    return one(True, "a", m_value=str(rows))


def _alloc_fix(call: MmaCall, expected: int) -> str:
    """How A's TMEM is allocated fully packed, in the call's API."""
    if call.frontend == "pallas":
        return "`plgpu.TMEM(shape, dtype, packed=True)`"
    return f"`mgpu.TMEM(shape, dtype, packing={expected})`"


def _packing_fields(call: MmaCall, table: Tcgen05Table, packing: int, expected: int) -> dict[str, str]:
    layout = table.tmem_default_layout
    return {
        "packing": str(packing), "expected_packing": str(expected),
        "expected_layout": layout.format(packing=expected), "a_layout": layout.format(packing=packing),
        "alloc_fix": _alloc_fix(call, expected),
    }


def _tmem_a_packing(call: MmaCall, element: str | None) -> tuple[int, int] | None:
    """A's packing and the one `element`'s width needs (32 // bits), when both are known."""
    bits = element_bits(element)
    packing = call.a.tmem_packing
    if bits is None or packing is None or bits > 32:
        return None
    return packing, full_packing(bits)


@condition("a-tmem-packing-invalid")
def _a_tmem_packing_invalid(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """Raw Mosaic GPU: A's TMEM allocated with a packing that is neither 1 nor 32 // bits of its
    dtype (`mgpu.TMEM(..., packing=2)` for int8): its TMEM layout cannot hold the type, and
    allocating it fails (`TMEMLayout.check_type`)."""
    if _a_in_tmem(call) is not True:
        return one(None if _a_in_tmem(call) is None else False)
    found = _tmem_a_packing(call, call.a.element_type)
    shape = matrix_shape(call.a.shape)
    if found is None or shape is None:
        return one(None)
    packing, full = found
    if packing.bit_count() != 1 or packing > TMEM_MAX_PACKING or shape[1] % packing:
        return one(None)  # "Packing must be <= 8 and a power of 2" and kin come first
    bits = element_bits(call.a.element_type)
    return one(packing not in (1, full), "a", variant="invalid", bits=str(bits), full=str(full),
                packing=str(packing), alloc_fix=_alloc_fix(call, full))


def _valid_packing(call: MmaCall) -> tuple[int, int] | None:
    """A's packing and the one its own dtype needs, when the packing is one a TMEM ref of that
    dtype can have (1 or full: anything else fails to allocate, above)."""
    found = _tmem_a_packing(call, call.a.element_type)
    if found is None or found[0] not in (1, found[1]):
        return None
    return found


@condition("a-tmem-layout")
def _a_tmem_layout(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """A in TMEM (128 rows) whose packing is not 32 // bits of the element type: unpacked bf16
    (`packed=False`, or `mgpu.TMEM`'s default packing of 1). jax compares the layouts."""
    tmem, shape = _a_in_tmem(call), matrix_shape(call.a.shape)
    if tmem is False:
        return one(False)
    valid = _valid_packing(call)
    if tmem is None or shape is None or shape[0] != A_IN_TMEM_M or valid is None:
        return one(None)
    if call.frontend == "pallas" and call.semantics is None:
        return one(None)  # under Warpgroup, `wg-a-tmem-packing` raises instead
    packing = valid[0]
    if table.a_packing_from_b:
        wanted = _tmem_a_packing(call, call.b.element_type)
        if wanted is None:
            return one(None)
        expected = wanted[1]
    else:
        expected = valid[1]
    return one(packing != expected, "a", **_packing_fields(call, table, packing, expected))


@condition("wg-a-tmem-packing")
def _wg_a_tmem_packing(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """Pallas under Warpgroup semantics: layout inference gives A in TMEM the packing of its
    element type, which contradicts the layout the ref was allocated with (the `packed=`)."""
    tmem, shape = _a_in_tmem(call), matrix_shape(call.a.shape)
    if tmem is False:
        return one(False)
    valid = _valid_packing(call)
    if tmem is None or shape is None or shape[0] not in SUPPORTED_M or valid is None:
        return one(None)
    if shape[0] != A_IN_TMEM_M and not _allocatable_rows(call, shape[0], shape[1]):
        return one(None)
    packing, expected = valid
    return one(packing != expected, "a", **_packing_fields(call, table, packing, expected))


@condition("a-tmem-not-collective")
def _a_tmem_not_collective(call: MmaCall, table: Tcgen05Table) -> list[Outcome]:
    """Pallas: a collective MMA (`collective_axis=`) whose A is a TMEM ref allocated without
    `collective=True`. Only when the accumulator is known collective: otherwise its own check
    ("Accumulator Ref must be collective") comes first."""
    if call_option(call, "collective") is False or _a_in_tmem(call) is False:
        return one(False)
    if call_option(call, "collective") is None or _a_in_tmem(call) is None:
        return one(None)
    a, d = call.a.tmem_collective, call.acc.tmem_collective
    if a is None or d is not True:
        return one(None)
    return one(not a, "a", variant="collective")
