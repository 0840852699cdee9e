"""Pallas's `plgpu.tcgen05_mma(acc, a, b, barrier=None, ...)`: the tcgen05 MMA over refs, an
accumulator allocated with `plgpu.TMEM(shape, dtype)` and SMEM (or TMEM) operands.

Recorded as a site of family "tcgen05" like Mosaic GPU's `tcgen05.mma` (which its lowering
calls with the same refs, under either lowering semantics), with `collective_axis` for
`collective`.
"""

from __future__ import annotations

from mmalint.analysis.host import Bound, Call, Host, model
from mmalint.analysis.models.arrays import is_none
from mmalint.analysis.models.mosaic.tcgen05 import given, record, scale_options
from mmalint.analysis.values import FALSE, NONE, TRUE, UNKNOWN, Const, Ref, Value

PLGPU_API = "plgpu.tcgen05_mma"


@model(
    PLGPU_API,
    signature="(acc, a, b, barrier=None, *, a_scale=None, b_scale=None, a_sparse_metadata=None,"
    " accumulate=True, collective_axis=None)",
)
def _tcgen05_mma(host: Host, args: Bound, call: Call) -> Value:
    axis = args["collective_axis"]
    collective: Value = FALSE if is_none(axis) else TRUE if axis.known else UNKNOWN
    accumulate = args["accumulate"] if args.given("accumulate") else TRUE
    options = (
        ("accumulate", accumulate if isinstance(accumulate, Const) else UNKNOWN),
        ("collective", collective),
        *scale_options(args),
        ("sparse", given(args, "a_sparse_metadata")),
    )
    record(host, PLGPU_API, args, call, options, parameters=("acc", "a", "b"))
    return NONE


@model("plgpu.Barrier", "plgpu.ClusterBarrier", signature="(...)")
def _barrier(host: Host, args: Bound, call: Call) -> Value:
    """`plgpu.Barrier(orders_tensor_core=True)` in scratch: the body gets a barrier ref. Known to
    be a ref (of no dtype), so that a kernel's scratch list with a barrier still binds the other
    refs (`plgpu.tcgen05_mma(acc, a, b, barrier)` needs one)."""
    return Ref(UNKNOWN, UNKNOWN)
