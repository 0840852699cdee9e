"""The condition of each check in `rules/checks.toml`, over a normalized call.

A condition answers True (jax fails this check), False (it passes) or None (not decidable from
what is known). Rules report only True: unknown is silence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mmalint.analysis.dtypes import DTYPES
from mmalint.checks.call import ACC_TYPES, MmaCall, Operand


@dataclass(frozen=True)
class Outcome:
    status: bool | None
    subject: str | None = None  # the operand role the finding is about: acc, a or b
    fields: dict[str, str] = field(default_factory=dict)


Condition = Callable[[MmaCall, dict[str, Any]], list[Outcome]]
CONDITIONS: dict[str, Condition] = {}


def condition(check_id: str) -> Callable[[Condition], Condition]:
    def register(fn: Condition) -> Condition:
        CONDITIONS[check_id] = fn
        return fn

    return register


def _one(status: bool | None, subject: str | None = None, **fields: str) -> list[Outcome]:
    return [Outcome(status, subject, dict(fields))]


def _kind(op: Operand) -> str | None:
    """int, uint, bool, float, complex (from the NumPy dtype) when known."""
    info = DTYPES.get(op.dtype or "")
    return info.kind if info is not None else None


# ---------------------------------------------------------------- both APIs


@condition("accumulator-last")
def _accumulator_last(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    """`mma(a, b, acc)`: two operands of one MMA type first, an accumulator type last."""
    first, second, last = call.acc, call.a, call.b
    if None in (first.element_type, second.element_type, last.element_type):
        return _one(None)
    operand_like = first.element_type in table["operand_types"]
    if (
        operand_like
        and first.element_type == second.element_type
        and last.element_type in ACC_TYPES
        and last.element_type != first.element_type
    ):
        return _one(True, "b")
    return _one(False)


# ---------------------------------------------------------------- mgpu.mma


@condition("fragment-is-signed")
def _fragment_is_signed(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for role in ("a", "b", "acc"):
        op = call.operands[role]
        if op.element_type is None or op.signedness is None:
            outcomes.append(Outcome(None, role))
            continue
        is_signed = {"signed": "True", "unsigned": "False", "signless": "None"}[op.signedness]
        if op.is_int and op.signedness == "signless":
            outcomes.append(Outcome(True, role, {"is_signed": is_signed, "type": op.element_type}))
        elif op.is_float and op.signedness != "signless":
            outcomes.append(Outcome(True, role, {"is_signed": is_signed, "type": op.element_type}))
        else:
            outcomes.append(Outcome(False, role))
    return outcomes


@condition("dtype-mismatch")
def _dtype_mismatch(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    a, b = call.a.element_type, call.b.element_type
    if a is None or b is None:
        return _one(None)
    return _one(a != b, "b")


@condition("unsupported-operand")
def _unsupported_operand(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    a = call.a.element_type
    if a is None:
        return _one(None)
    return _one(a not in table["operand_types"], "a")


@condition("int-acc-not-i32")
def _int_acc_not_i32(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    if call.a.element_type is None:
        return _one(None)
    if not call.a.is_int:
        return _one(False)
    if call.acc.element_type is None:
        return _one(None)
    return _one(call.acc.element_type != "i32", "acc")


@condition("int-acc-unsigned")
def _int_acc_unsigned(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    if call.a.element_type is None:
        return _one(None)
    if not call.a.is_int:
        return _one(False)
    if call.acc.element_type is None or call.acc.signedness is None:
        return _one(None)
    # jax checks the signedness after the type: only an i32 accumulator gets this far, and one
    # built without is_signed never gets built at all (MMA202).
    return _one(call.acc.element_type == "i32" and call.acc.signedness == "unsigned", "acc")


@condition("f64-acc-not-f64")
def _f64_acc(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    if call.a.element_type is None:
        return _one(None)
    if call.a.element_type != "f64":
        return _one(False)
    if call.acc.element_type is None:
        return _one(None)
    return _one(call.acc.element_type != "f64", "acc")


@condition("float-acc-not-f32")
def _float_acc(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    if call.a.element_type is None:
        return _one(None)
    if not call.a.is_float or (call.a.element_type == "f64" and "f64" in table["operand_types"]):
        return _one(False)
    if call.acc.element_type is None:
        return _one(None)
    return _one(call.acc.element_type != "f32", "acc")


@condition("operand-sign-vs-data")
def _sign_vs_data(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for role in ("a", "b"):
        op = call.operands[role]
        info = DTYPES.get(op.data_dtype or "")
        if info is None or op.signedness not in ("signed", "unsigned"):
            outcomes.append(Outcome(None, role))
            continue
        if info.kind not in ("int", "uint"):
            outcomes.append(Outcome(False, role))
            continue
        data_signed = info.kind == "int"
        flagged_signed = op.signedness == "signed"
        outcomes.append(Outcome(data_signed != flagged_signed, role))
    return outcomes


# ---------------------------------------------------------------- plgpu.mma


@condition("pallas-dtype-mismatch")
def _pallas_dtype_mismatch(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    if call.a.dtype is None or call.b.dtype is None:
        return _one(None)
    return _one(call.a.dtype != call.b.dtype, "b")


def _int_or_bool(op: Operand) -> bool | None:
    kind = _kind(op)
    return None if kind is None else kind in ("int", "uint", "bool")


@condition("pallas-int-acc-unsigned")
def _pallas_int_acc_unsigned(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    integer = _int_or_bool(call.a)
    if integer is None:
        return _one(None)
    if not integer:
        return _one(False)
    if call.acc.dtype is None:
        return _one(None)
    return _one(call.acc.dtype == "uint32", "acc")


@condition("pallas-int-acc-not-int32")
def _pallas_int_acc(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    integer = _int_or_bool(call.a)
    if integer is None:
        return _one(None)
    if not integer:
        return _one(False)
    if call.acc.dtype is None:
        return _one(None)
    return _one(call.acc.dtype not in ("int32", "uint32"), "acc")


@condition("pallas-float-acc")
def _pallas_float_acc(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    kind = _kind(call.a)
    if kind is None:
        return _one(None)
    if kind != "float":
        return _one(False)
    if call.acc.dtype is None:
        return _one(None)
    return _one(call.acc.dtype not in table["float_accumulators"], "acc")


@condition("pallas-unsupported-operand")
def _pallas_unsupported(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    kind = _kind(call.a)
    if kind is None:
        return _one(None)
    return _one(kind not in ("int", "uint", "bool", "float"), "a")


@condition("pallas-bool-operand")
def _pallas_bool(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    kind = _kind(call.a)
    if kind is None:
        return _one(None)
    return _one(kind == "bool", "a")


def _lowering_unsupported(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    kind = _kind(call.a)
    if kind is None or call.a.element_type is None:
        return _one(None)
    if kind not in ("int", "uint", "float"):
        return _one(False)  # bool and complex fail earlier, with their own checks
    return _one(call.a.element_type not in table["operand_types"], "a")


CONDITIONS["pallas-lane-unsupported-operand"] = _lowering_unsupported
CONDITIONS["pallas-wg-unsupported-operand"] = _lowering_unsupported


@condition("pallas-f64-acc-not-f64")
def _pallas_f64_acc(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    return _f64_acc(call, table)


@condition("pallas-float-acc-not-f32")
def _pallas_float_acc_lowering(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    return _float_acc(call, table)


@condition("pallas-unsigned-as-signed")
def _pallas_unsigned(call: MmaCall, table: dict[str, Any]) -> list[Outcome]:
    outcomes = []
    for role in ("a", "b"):
        kind = _kind(call.operands[role])
        outcomes.append(Outcome(None if kind is None else kind == "uint", role))
    hits = [o for o in outcomes if o.status]
    if hits:
        return hits[:1]
    if any(o.status is None for o in outcomes):
        return _one(None)
    return _one(False)
