"""Pallas's warpgroup accumulators: `plgpu.ACC(shape, dtype=jnp.float32)` (scratch for
`pl.run_scoped` or `scratch_shapes`), `plgpu.ACC.init(array)` and `pl.run_state(f)(...)`.

An allocated accumulator reaches the scope as a `Ref` of its dtype (f32 unless given), as any
scratch buffer; one initialised from an array under `pl.run_state` reaches it as that array, so
the family can tell the two apart (jax's unsigned-accumulator check runs only at allocation).
"""

from __future__ import annotations

from mmalint.analysis.host import Args, Bound, Call, Host, model
from mmalint.analysis.models.arrays import as_ref, as_shape_value, is_none, to_dtype
from mmalint.analysis.values import UNKNOWN, Api, Array, DType, Partial, Value


@model("plgpu.ACC", "plgpu.WGMMAAccumulatorRef", signature="(shape, dtype=None, ...)")
def _acc(host: Host, args: Bound, call: Call) -> Value:
    """`plgpu.ACC((m, n))` is float32 (`WGMMAAccumulatorRef.dtype = jnp.float32`)."""
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = DType("float32", origin=call.origin) if args.complete else UNKNOWN
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how="scratch")


@model("plgpu.ACC.init", "plgpu.WGMMAAccumulatorRef.init", signature="(array)")
def _acc_init(host: Host, args: Bound, call: Call) -> Value:
    """An accumulator holding `array`: its dtype and shape (`ACC(array.shape, array.dtype)`)."""
    array = args["array"]
    if isinstance(array, Array):
        return Array(array.dtype, array.shape, UNKNOWN, created=call.origin, how="accumulator init")
    return Array(UNKNOWN, UNKNOWN, UNKNOWN, created=call.origin, how="accumulator init")


@model("pl.run_state", signature="(stateful_fun)")
def _run_state(host: Host, args: Bound, call: Call) -> Value:
    """`pl.run_state(f)`: a function running `f` on refs holding its arguments."""
    return Partial(Api("pl.run_state.run"), (args["stateful_fun"],), ())


@model("pl.run_state.run", signature="(f, *values)")
def _run_state_run(host: Host, args: Bound, call: Call) -> Value:
    refs = [v if isinstance(v, Array) and v.how == "accumulator init" else as_ref(v) for v in args.positional[1:]]
    host.call_value(args["f"], Args(refs, {}, [], {}, args.complete), call.node, call.frame, call.block)
    return UNKNOWN
