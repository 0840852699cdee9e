"""The fixed signature per rule code of the warp-level family: what the flagged call should
have been.

The GPU tier runs the fix next to the flagged call and wants it to match NumPy; the ptx tier
assembles the fix's instruction to show the flagged one fails for the finding's reason and not
for the target's. Each fix changes only what its rule is about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mmalint.confirm import dtypes
from mmalint.confirm.families.mma.facts import (
    ARCH_MINIMUM,
    BASE_ARCH,
    DEFAULT_M_WARPS,
    SIGNED_OF_MIX,
    SUPPORTED_SUBSTITUTE,
    VALID_M_WARPS,
    acc_tile,
    accumulator_dtype,
    k_tile,
)
from mmalint.confirm.signature import Call, Layout, Operand

FIX_DESCRIPTIONS: dict[str, str] = {
    "MMA101": "accumulator -> int32, is_signed=True",
    "MMA102": "accumulator -> float32 (float64 for float64 operands)",
    "MMA103": "b -> a's dtype (an int8/uint8 or int4/uint4 mix -> both signed)",
    "MMA104": "operands -> a supported dtype of the same kind "
              "(floats -> bfloat16, other fp8 -> float8_e4m3fn, wide ints -> int8/uint8, "
              "2-bit ints -> int4/uint4, bool -> uint8), accumulator to match",
    "MMA105": "arguments reordered to mma(acc, a, b)",
    "MMA201": "accumulator is_signed=True",
    "MMA202": "is_signed per dtype (integers signed or unsigned as their data, floats None)",
    "MMA203": "operand is_signed per the data's dtype",
    "MMA204": "LoweringSemantics.Lane",
    "MMA301": "a loaded with MMALayouts(T, m_warps=acc's).lhs for its bit width, no conversion",
    "MMA302": "b loaded with MMALayouts(T, m_warps=acc's).rhs for its bit width, no conversion",
    "MMA303": "accumulator with MMALayouts(T, m_warps=operands').acc, no conversion",
    "MMA304": "m_warps 4, or the largest of 2, 1 whose tiles divide the shapes",
    "MMA305": "operand layouts with the accumulator's m_warps",
    "MMA401": "shapes made to agree: b = (K, N), acc = (M, N) from a = (M, K) and acc's N",
    "MMA402": "shapes rounded up to the base tiles: lhs (16*mw, 256/bits), "
              "rhs (256/bits, 8*nw), acc (16*mw, 8*nw)",
    "MMA502": "target raised to the first architecture with the instruction",
}


def fixed_call(call: Call, code: str) -> Call | None:
    """The call with the finding's mistake fixed, or None when no fix is known for `code`."""
    fix = _FIXES.get(code)
    return fix(call) if fix is not None else None


def unmasked_call(call: Call, masked_by: tuple[str, ...]) -> Call:
    """The call with the earlier findings that mask this one fixed first.

    A finding with `masked_by` predicts what jax raises once the masking mistake is gone, so
    both the flagged call and its fix are built from the unmasked call.
    """
    for code in masked_by:
        fixed = fixed_call(call, code)
        if fixed is not None:
            call = fixed
    return call


def _retyped(op: Operand, dtype_name: str, signedness: str | None = None) -> Operand:
    """`op` with a new dtype; an MMA operand layout follows the new bit width."""
    info = dtypes.DTYPES[dtype_name]
    layout = op.layout
    if layout.kind in ("mma_lhs", "mma_rhs", "wgmma_8bit") or layout.bitwidth is not None:
        kind = "mma_lhs" if layout.kind == "wgmma_8bit" else layout.kind
        layout = replace(layout, kind=kind, bitwidth=info.bits if kind != "mma_acc" else None)
    return replace(
        op, dtype=dtype_name, element_type=info.mlir,
        signedness=signedness or info.natural_signedness, data_dtype=dtype_name, layout=layout,
    )


def _with_intended(call: Call, acc: Operand, a: Operand, b: Operand) -> Call:
    """The call with new values by role (the order passed is `argument_order`'s business)."""
    return replace(call, acc=acc, a=a, b=b)


def _fix_101(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _retyped(acc, "int32", "signed"), a, b)


def _fix_102(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _retyped(acc, accumulator_dtype(a.mlir or "")), a, b)


def _fix_103(call: Call) -> Call:
    acc, a, b = call.intended
    a_dtype = a.resolved_dtype or dtypes.dtype_for(a.mlir or "", a.signedness) or "int8"
    signed = SIGNED_OF_MIX.get(frozenset({a_dtype, b.resolved_dtype or ""}))
    if signed is not None:
        # An int8 x uint8 mix becomes int8 x int8: unsigned operands are computed as signed
        # under Pallas warpgroup semantics (MMA204), so the signed type is the fix that holds.
        fixed_a = _retyped(a, signed, "signed")
        fixed_b = _retyped(b, signed, "signed")
        return _with_intended(call, acc, replace(fixed_a, data_dtype=signed), replace(fixed_b, data_dtype=signed))
    fixed_b = _retyped(b, a_dtype, a.signedness)
    return _with_intended(call, acc, a, replace(fixed_b, data_dtype=a.data_dtype or a_dtype))


def _fix_104(call: Call) -> Call:
    acc, a, b = call.intended

    def substitute(op: Operand) -> Operand:
        name = op.resolved_dtype or ""
        return _retyped(op, SUPPORTED_SUBSTITUTE[name]) if name in SUPPORTED_SUBSTITUTE else op

    a2, b2 = substitute(a), substitute(b)
    want = accumulator_dtype(a2.mlir or "")
    acc2 = acc if acc.resolved_dtype == want and acc.signedness != "unsigned" else _retyped(
        acc, want)
    return _with_intended(call, acc2, a2, b2)


def _fix_105(call: Call) -> Call:
    return replace(call, argument_order="acc_a_b")


def _fix_201(call: Call) -> Call:
    acc, a, b = call.intended
    dtype = "int32" if acc.resolved_dtype in ("uint32", None) else acc.resolved_dtype
    fixed = replace(_retyped(acc, dtype or "int32", "signed"), layout=acc.layout)
    return _with_intended(call, fixed, a, b)


def _signedness_per_data(op: Operand) -> Operand:
    mlir = op.mlir or ""
    if not dtypes.mlir_is_integer(mlir):
        return replace(op, signedness="signless")
    data = dtypes.lookup(op.data_dtype)
    signedness = data.natural_signedness if data is not None and data.mlir == mlir else (
        op.signedness if op.signedness in ("signed", "unsigned") else "signed")
    return replace(op, signedness=signedness, dtype=dtypes.dtype_for(mlir, signedness))


def _fix_202(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _signedness_per_data(acc), _signedness_per_data(a),
                          _signedness_per_data(b))


def _fix_203(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, acc, _signedness_per_data(a), _signedness_per_data(b))


def _fix_204(call: Call) -> Call:
    return replace(call, lowering_semantics="lane")


def _fix_502(call: Call) -> Call:
    _, a, b = call.intended
    arch = ARCH_MINIMUM.get(a.mlir or "") or ARCH_MINIMUM.get(b.mlir or "") or BASE_ARCH
    return replace(call, target_arch=arch)


# ---------------------------------------------------------------- layouts (MMA3xx)

def acc_m_warps(call: Call) -> int:
    """The m_warps jax reads off the accumulator layout (4 for WGMMA_LAYOUT, for the m_warps=4
    default, and for an accumulator that has no valid MMA layout)."""
    layout = call.acc.layout
    if layout.kind == "mma_acc" and layout.m_warps in VALID_M_WARPS:
        return layout.m_warps
    return DEFAULT_M_WARPS


def _operand_m_warps(call: Call) -> int:
    for op in (call.a, call.b):
        if op.layout.kind in ("mma_lhs", "mma_rhs") and op.layout.m_warps in VALID_M_WARPS:
            return op.layout.m_warps
    return DEFAULT_M_WARPS


def _mma_layout(op: Operand, kind: str, m_warps: int) -> Operand:
    """`op` built directly with the MMA layout `kind` (no conversion): an mma result or a
    strided value is round-tripped through memory, i.e. loaded with the right layout."""
    bits = None if kind == "mma_acc" else op.bits
    source = op.source
    if op.converted_from is not None or source in ("mma result", "computed"):
        source = "loaded"
    # Through the view its tiling loads from: lhs plain, rhs transposed (jax's own tests).
    view = {"mma_lhs": "plain", "mma_rhs": "transposed"}.get(kind, op.view)
    return replace(op, layout=Layout(kind=kind, bitwidth=bits, m_warps=m_warps),
                   converted_from=None, source=source, view=view if op.view is not None else None)


def _fix_301(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, acc, _mma_layout(a, "mma_lhs", acc_m_warps(call)), b)


def _fix_302(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, acc, a, _mma_layout(b, "mma_rhs", acc_m_warps(call)))


def _fix_303(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _mma_layout(acc, "mma_acc", _operand_m_warps(call)), a, b)


def _dims(call: Call) -> tuple[int | None, int | None, int | None]:
    """(M, N, K): M and K from a, N from the accumulator, each else from the other operand."""
    def dim(op: Operand, i: int) -> int | None:
        shape = op.shape
        return shape[i] if shape is not None and len(shape) == 2 else None

    acc, a, b = call.intended
    return (dim(a, 0) or dim(acc, 0), dim(acc, 1) or dim(b, 1), dim(a, 1) or dim(b, 0))


def largest_m_warps(m: int | None, n: int | None) -> int:
    """What `MMALayouts.for_shape` picks: the largest m_warps whose accumulator tile
    (16 * m_warps, 8 * (4 // m_warps)) divides (m, n); 4 when none does or a dim is unknown."""
    if m is None or n is None:
        return DEFAULT_M_WARPS
    for m_warps in VALID_M_WARPS:
        tile_m, tile_n = acc_tile(m_warps)
        if m % tile_m == 0 and n % tile_n == 0:
            return m_warps
    return DEFAULT_M_WARPS


def _fix_304(call: Call) -> Call:
    m, n, _ = _dims(call)
    m_warps = largest_m_warps(m, n)

    def fixed(op: Operand) -> Operand:
        if op.layout.kind in ("mma_lhs", "mma_rhs", "mma_acc"):
            return replace(op, layout=replace(op.layout, m_warps=m_warps))
        return op

    acc, a, b = call.intended
    return _with_intended(call, fixed(acc), fixed(a), fixed(b))


def _fix_305(call: Call) -> Call:
    m_warps = acc_m_warps(call)

    def fixed(op: Operand) -> Operand:
        if op.layout.kind in ("mma_lhs", "mma_rhs"):
            return replace(op, layout=replace(op.layout, m_warps=m_warps))
        return op

    acc, a, b = call.intended
    return _with_intended(call, acc, fixed(a), fixed(b))


# ---------------------------------------------------------------- shapes (MMA4xx)

def _fix_401(call: Call) -> Call:
    m, n, k = _dims(call)
    acc, a, b = call.intended
    return _with_intended(call, replace(acc, shape=(m, n)), replace(a, shape=(m, k)),
                          replace(b, shape=(k, n)))


def _round_up(x: int | None, multiple: int) -> int | None:
    return None if x is None else -(-x // multiple) * multiple


def _fix_402(call: Call) -> Call:
    m, n, k = _dims(call)
    mw = acc_m_warps(call)
    acc, a, b = call.intended
    tile_m, tile_n = acc_tile(mw)
    m2, n2 = _round_up(m, tile_m), _round_up(n, tile_n)
    k2 = _round_up(k, k_tile(a.bits or 16))
    return _with_intended(call, replace(acc, shape=(m2, n2)), replace(a, shape=(m2, k2)),
                          replace(b, shape=(k2, n2)))


_FIXES: dict[str, Callable[[Call], Call]] = {
    "MMA101": _fix_101,
    "MMA102": _fix_102,
    "MMA103": _fix_103,
    "MMA104": _fix_104,
    "MMA105": _fix_105,
    "MMA201": _fix_201,
    "MMA202": _fix_202,
    "MMA203": _fix_203,
    "MMA204": _fix_204,
    "MMA301": _fix_301,
    "MMA302": _fix_302,
    "MMA303": _fix_303,
    "MMA304": _fix_304,
    "MMA305": _fix_305,
    "MMA401": _fix_401,
    "MMA402": _fix_402,
    "MMA502": _fix_502,
}

