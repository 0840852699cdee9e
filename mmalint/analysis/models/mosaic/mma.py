"""The warp-level MMA family: `mgpu.mma` and `plgpu.mma(acc, a, b)`.

Each call is recorded as an `MmaSite` of family "mma", its operands named by the roles of the
signature, and returns the accumulator it updates.
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite, SiteOperand
from mmalint.analysis.host import Bound, Call, Host, ModelFn, model, record_use, trigger
from mmalint.analysis.values import UNKNOWN, Array, DType, Fragment, IrType, Value
from mmalint.facts.mma import ACCUMULATOR_DTYPES, ACCUMULATOR_TYPES

FAMILY = "mma"
ROLES = ("acc", "a", "b")
SIGNATURE = "(acc, a, b, ...)"
APIS = ("mgpu.mma", "plgpu.mma")

# Warp-level `mma` as a word (`mgpu.mma(`, `plgpu.mma(`, `from ...mma import`), not `wgmma`,
# `tcgen05_mma` or `do_mma`.
trigger(r"(?<!tcgen05\.)(?<!dialect\.)(?<![A-Za-z0-9_])mma(?![A-Za-z0-9_])")


def _mma(api: str) -> ModelFn:
    def mma(host: Host, args: Bound, call: Call) -> Value:
        values = tuple(args[role] for role in ROLES)
        operands = tuple(
            SiteOperand(role, value, call.origin_of(args.node(role)))
            for role, value in zip(ROLES, values, strict=True)
        )
        host.record(MmaSite(FAMILY, api, call.origin, operands, host.context))
        if api == "plgpu.mma":
            record_use(host, api, args, call)
        acc = _accumulator_of(values)
        if isinstance(acc, Fragment):
            return Fragment(acc.ir_type, acc.signed, acc.layout, acc.shape, UNKNOWN, created=call.origin,
                            how="mma result")
        if isinstance(acc, Array):
            return Array(acc.dtype, acc.shape, acc.layout, created=call.origin, how="mma result")
        return UNKNOWN

    return mma


for _api in APIS:
    model(_api, signature=SIGNATURE)(_mma(_api))




def _acc_like(value: Value) -> bool | None:
    if isinstance(value, Fragment) and isinstance(value.ir_type, IrType):
        return value.ir_type.name in ACCUMULATOR_TYPES
    if isinstance(value, Array) and isinstance(value.dtype, DType):
        return value.dtype.name in ACCUMULATOR_DTYPES
    return None


def _accumulator_of(values: tuple[Value, ...]) -> Value:
    """The argument whose facts the MMA result carries: the accumulator the author meant.

    `mma(a, b, acc)` (MMA105) fails, but a K loop that reassigns `acc` from it should carry the
    accumulator, not an operand, into the next iteration: otherwise every later check on the
    loop-carried value reports a consequence of the one mistake.
    """
    if _acc_like(values[0]) is False and _acc_like(values[1]) is False and _acc_like(values[2]):
        return values[2]
    kinds = [getattr(getattr(v, "layout", None), "kind", None) for v in values]
    if kinds[:2] == ["mma_lhs", "mma_rhs"] and (
        kinds[2] == "mma_acc" or (kinds[2] is None and _acc_like(values[2]))
    ):
        return values[2]
    return values[0]
