"""The fixed signature per rule code: what the flagged call should have been.

The GPU tier runs the fix next to the flagged call and wants it to match NumPy; the ptx tier
assembles the fix's instruction to show the flagged one fails for the finding's reason and not
for the target's. Each fix changes only what its rule is about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mmalint.confirm import dtypes
from mmalint.confirm.signature import Call, Operand

# Rules whose mistake raises nothing: the numbers are silently wrong.
SILENT_CODES = frozenset({"MMA203", "MMA204"})

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


def _acc_for(a: Operand) -> str:
    info = dtypes.lookup(a.resolved_dtype)
    if info is not None and info.is_integer:
        return "int32"
    return "float64" if a.mlir == "f64" else "float32"


def _fix_101(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _retyped(acc, "int32", "signed"), a, b)


def _fix_102(call: Call) -> Call:
    acc, a, b = call.intended
    return _with_intended(call, _retyped(acc, _acc_for(a)), a, b)


_SIGNED_OF_MIX = {frozenset({"int8", "uint8"}): "int8", frozenset({"int4", "uint4"}): "int4"}


def _fix_103(call: Call) -> Call:
    acc, a, b = call.intended
    a_dtype = a.resolved_dtype or dtypes.dtype_for(a.mlir or "", a.signedness) or "int8"
    signed = _SIGNED_OF_MIX.get(frozenset({a_dtype, b.resolved_dtype or ""}))
    if signed is not None:
        # An int8 x uint8 mix becomes int8 x int8: unsigned operands are computed as signed
        # under Pallas warpgroup semantics (MMA204), so the signed type is the fix that holds.
        fixed_a = _retyped(a, signed, "signed")
        fixed_b = _retyped(b, signed, "signed")
        return _with_intended(call, acc, replace(fixed_a, data_dtype=signed), replace(fixed_b, data_dtype=signed))
    fixed_b = _retyped(b, a_dtype, a.signedness)
    return _with_intended(call, acc, a, replace(fixed_b, data_dtype=a.data_dtype or a_dtype))


_SUBSTITUTES: dict[str, str] = {
    "float32": "bfloat16", "float64": "bfloat16", "complex64": "bfloat16",
    "complex128": "bfloat16", "float8_e4m3fnuz": "float8_e4m3fn",
    "float8_e5m2fnuz": "float8_e5m2", "float8_e4m3b11fnuz": "float8_e4m3fn",
    "float8_e4m3": "float8_e4m3fn", "float8_e3m4": "float8_e4m3fn",
    "float4_e2m1fn": "float8_e4m3fn", "int16": "int8", "int32": "int8", "int64": "int8",
    "uint16": "uint8", "uint32": "uint8", "uint64": "uint8", "int2": "int4", "uint2": "uint4",
    "bool": "uint8",
}


def _fix_104(call: Call) -> Call:
    acc, a, b = call.intended

    def substitute(op: Operand) -> Operand:
        name = op.resolved_dtype or ""
        return _retyped(op, _SUBSTITUTES[name]) if name in _SUBSTITUTES else op

    a2, b2 = substitute(a), substitute(b)
    want = _acc_for(a2)
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
    needs = {"f8E4M3FN": "sm_89", "f8E5M2": "sm_89", "f64": "sm_90"}
    arch = needs.get(a.mlir or "") or needs.get(b.mlir or "") or "sm_80"
    return replace(call, target_arch=arch)


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
    "MMA502": _fix_502,
}

