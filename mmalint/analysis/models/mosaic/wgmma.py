"""The warpgroup MMA family: `mgpu.wgmma(acc, a, b, swizzle=...)` and its accumulator,
`mgpu.WGMMAAccumulator` (`zero`, `from_registers`), and Pallas's `plgpu.wgmma(acc_ref, a, b)`.

Each call is recorded as an `MmaSite` of family "wgmma" with its operands by role (`acc`, `a`,
`b`) and its swizzle as an option. The accumulator of Mosaic GPU is modelled as the fragment it
wraps (`WGMMAAccumulator.zero(m, n)` is an f32 splat in `WGMMA_LAYOUT`); Pallas's is the ref
`plgpu.ACC` gives the scope it runs (`models/pallas/wgmma.py`).
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite, SiteOperand
from mmalint.analysis.host import Bound, Call, Host, ModelFn, model, trigger
from mmalint.analysis.models.arrays import is_none, signed_arg
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Const,
    Fragment,
    IrType,
    Layout,
    TupleVal,
    Value,
    as_int,
)
from mmalint.facts.wgmma import DEFAULT_SWIZZLE

FAMILY = "wgmma"
ROLES = ("acc", "a", "b")
APIS = ("mgpu.wgmma", "plgpu.wgmma")

# `wgmma` as a word (`mgpu.wgmma(`, `plgpu.wgmma(`, `from ...wgmma import wgmma`), not
# `wgmma_wait` or `WGMMAAccumulator` alone: without the call itself no site is recorded.
trigger(r"(?<![A-Za-z0-9_])wgmma(?![A-Za-z0-9_])")

_WGMMA_LAYOUT = Layout("mma_acc", None, 4, name="WGMMA_LAYOUT")


def _wgmma(api: str, signature: str) -> ModelFn:
    def wgmma(host: Host, args: Bound, call: Call) -> Value:
        operands = tuple(SiteOperand(role, args[role], call.origin_of(args.node(role))) for role in ROLES)
        options: tuple[tuple[str, Value], ...] = ()
        if api == "mgpu.wgmma":
            swizzle = args["swizzle"] if args.given("swizzle") else (Const(DEFAULT_SWIZZLE) if args.complete else UNKNOWN)
            options = (("swizzle", swizzle),)
        host.record(MmaSite(FAMILY, api, call.origin, operands, host.context, options))
        acc = args["acc"]
        if api == "plgpu.wgmma":
            return NONE  # it updates the accumulator ref in place
        if isinstance(acc, Fragment):
            return Fragment(acc.ir_type, acc.signed, acc.layout, acc.shape, UNKNOWN, created=acc.created,
                            how=acc.how)
        return UNKNOWN

    model(api, signature=signature)(wgmma)
    return wgmma


_wgmma("mgpu.wgmma", "(acc, a, b, *, swizzle=128)")
_wgmma("plgpu.wgmma", "(acc, a, b)")


@model("mgpu.WGMMAAccumulator.zero", signature="(m, n, dtype=None, *, is_signed=None)")
def _zero(host: Host, args: Bound, call: Call) -> Value:
    """An accumulator of zeros in `WGMMA_LAYOUT`: f32 unless `dtype` (an MLIR type) says."""
    dtype = args["dtype"]
    if is_none(dtype):
        dtype = IrType("f32", origin=call.origin)  # jax: `if dtype is None: dtype = f32`
    elif not isinstance(dtype, IrType):
        dtype = UNKNOWN
    m, n = args["m"], args["n"]
    shape = TupleVal((m, n)) if as_int(m) is not None and as_int(n) is not None else UNKNOWN
    return Fragment(dtype, signed_arg(args, "is_signed", call), _WGMMA_LAYOUT, shape, UNKNOWN,
                    created=call.origin, how="wgmma accumulator")


@model("mgpu.WGMMAAccumulator.from_registers", signature="(registers, sync=True)")
def _from_registers(host: Host, args: Bound, call: Call) -> Value:
    """The accumulator of an array: its type, signedness, layout and shape."""
    registers = args["registers"]
    if isinstance(registers, Fragment):
        return Fragment(registers.ir_type, registers.signed, registers.layout, registers.shape, UNKNOWN,
                        created=registers.created, how=registers.how)
    return UNKNOWN
