"""The conditions of the warpgroup MMA family (`rules/checks/wgmma.toml`), over a normalized call.

jax's `wgmma` keys its dtype checks on **B's** element type (`wgmma.py` v11:385-409); the
accumulator is the fragment `WGMMAAccumulator` wraps (Mosaic GPU) or the `plgpu.ACC` ref / the
array `plgpu.ACC.init` was given (Pallas). Each condition answers True (jax fails the check, or
the numbers are wrong), False (it passes) or None (not decidable from what is known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmalint.checks.conditions.registry import Conditions, Outcome
from mmalint.facts.dtypes import DTYPES
from mmalint.facts.wgmma import (
    ACCUMULATOR_TEXT,
    ACCUMULATORS,
    FP8_TYPES,
    M_MULTIPLE,
    N_MAX,
    N_MULTIPLE,
    integer_n_ok,
)

if TYPE_CHECKING:
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


def _one(status: bool | None, subject: str | None = None, **fields: str) -> list[Outcome]:
    return [Outcome(status, subject, dict(fields))]


def _kind(op: Operand) -> str | None:
    """int, uint, bool, float... of the operand's NumPy dtype when known."""
    info = DTYPES.get(op.dtype or "")
    return info.kind if info is not None else None


def operands_unknown(call: MmaCall) -> bool:
    return call.b.element_type is None and call.a.element_type is None


@condition("zero-unsigned")
def _zero_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """`WGMMAAccumulator.zero(..., is_signed=False)`: TypeError before any wgmma."""
    acc = call.acc
    if acc.how != ZERO or acc.signedness is None:
        return _one(None, "acc")
    return _one(acc.signedness == "unsigned", "acc")


@condition("acc-allocated-unsigned")
def _allocated_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A `plgpu.ACC` of an unsigned or bool dtype: jax refuses to allocate it (`utils.is_signed`
    is False). An accumulator from `ACC.init` skips the check."""
    acc = call.acc
    if acc.how == INIT or acc.memory_space != "registers" or acc.how != "allocated":
        return _one(None, "acc")
    kind = _kind(acc)
    return _one(None if kind is None else kind in ("uint", "bool"), "acc")


@condition("register-a-unsigned")
def _register_a_unsigned(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An 8-bit integer A in registers that is not signed: `WGMMA with lhs of type u8`."""
    a, b = call.a, call.b
    if a.memory_space != "registers" or b.element_type is None:
        return _one(None, "a")
    if b.element_type != "i8":
        return _one(False, "a")
    if a.element_type != "i8" or a.signedness is None:
        return _one(None, "a")
    return _one(a.signedness != "signed", "a")


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
    return _one(_int_b_float_acc(call), "acc", type=call.acc.element_type or "?")


@condition("wg-acc-pair")
def _wg_acc_pair(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """The pair check as Warpgroup lowering reaches it: integer operands with a floating
    accumulator failed earlier; a bf16 accumulator fails in the verifier (not predicted)."""
    mixed = _int_b_float_acc(call)
    if mixed is None or call.acc.element_type == "bf16":
        return [Outcome(None, "acc")]
    if mixed:
        return [Outcome(False, "acc")]
    return [Outcome(_pair(call), "acc", _pair_fields(call))]


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
        return _one(None, "a")
    return _one(a.dtype == "uint8", "a")


@condition("integer-n")
def _integer_n(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An integer wgmma whose N passes jax's `n % 8` check and is not an N ptxas accepts."""
    if call.b.element_type != "i8":
        return _one(None if call.b.element_type is None else False, "acc")
    shape = call.acc.shape
    n = shape[1] if shape is not None and len(shape) == 2 else None
    if n is None:
        return _one(None, "acc")
    if n % N_MULTIPLE or n > N_MAX:
        return _one(False, "acc")
    return _one(not integer_n_ok(n), "acc", n_value=str(n))


def _mismatch(a: str | None, b: str | None, a_type: str | None, b_type: str | None,
              table: WgmmaTable) -> bool | None:
    if a is None or b is None:
        return None
    if a == b:
        return False
    return not (table.mixed_fp8 and a_type in FP8_TYPES and b_type in FP8_TYPES)


@condition("dtype-mismatch")
def _dtype_mismatch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A and B of different MLIR element types (int8 and uint8 are both i8)."""
    a, b = call.a, call.b
    return _one(_mismatch(a.element_type, b.element_type, a.element_type, b.element_type, table), "a")


@condition("pallas-dtype-mismatch")
def _pallas_dtype_mismatch(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """A and B of different dtypes, as Pallas compares them when the call is traced."""
    a, b = call.a, call.b
    return _one(_mismatch(a.dtype, b.dtype, a.element_type, b.element_type, table), "a")


def _acc_mn(call: MmaCall) -> tuple[int, int] | None:
    shape = call.acc.shape
    if shape is None or len(shape) != 2 or shape[0] is None or shape[1] is None:
        return None
    return shape[0], shape[1]


@condition("zero-shape")
def _zero_shape(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """An accumulator of zeros whose M is not a multiple of 64 or N of 8 (`zero`, and the
    `plgpu.ACC` allocation under Lane semantics, which calls it)."""
    if call.acc.how not in (ZERO, "allocated"):
        return _one(None, "acc")
    mn = _acc_mn(call)
    if mn is None:
        return _one(None, "acc")
    m, n = mn
    return _one(bool(m % M_MULTIPLE or n % N_MULTIPLE), "acc", m_value=str(m), n_value=str(n))


@condition("n-range")
def _n_range(call: MmaCall, table: WgmmaTable) -> list[Outcome]:
    """N (the accumulator's) above 256 or not a multiple of 8; M a multiple of 64, so that
    the checks before this one pass."""
    mn = _acc_mn(call)
    if mn is None:
        return _one(None, "acc")
    m, n = mn
    if m % M_MULTIPLE:
        return _one(None, "acc")
    return _one(bool(n > N_MAX or n % N_MULTIPLE), "acc", n_value=str(n))
