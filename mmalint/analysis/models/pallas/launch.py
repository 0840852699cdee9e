"""Pallas kernel launches: `plgpu.kernel`, `pl.pallas_call`, `plgpu.emit_pipeline`, block specs,
scratch memory, `pl.run_scoped` and Pallas's control flow.

A launch factory makes a `Kernel`; calling it runs the body with one ref per input, output and
scratch buffer, under the kernel's lowering semantics.
"""

from __future__ import annotations

import contextlib

from mmalint.analysis.host import (
    REGISTRY,
    Args,
    Bound,
    Call,
    Diverges,
    Host,
    ModelFn,
    Signature,
    callable_kind,
    model,
    partial_of,
    value_kinds,
)
from mmalint.analysis.models.arrays import (
    SMEM_SCRATCH,
    as_ref,
    as_shape_value,
    is_none,
    leaves,
    to_dtype,
)
from mmalint.analysis.models.mosaic.launch import blind_decorator, when
from mmalint.analysis.models.numpy import jax_dtype
from mmalint.analysis.values import (
    NONE,
    TRUE,
    UNKNOWN,
    Api,
    Array,
    BlockSpecVal,
    CompilerParams,
    Const,
    DictVal,
    Kernel,
    Origin,
    Partial,
    Ref,
    Semantics,
    TupleVal,
    Value,
    as_int,
    join,
)

_FACTORIES = ("plgpu.kernel", "pl.pallas_call", "plgpu.emit_pipeline")


def _kernel_factory(api: str, blind: bool = False) -> ModelFn:
    # The body is positional or `body=`/`kernel=`; the output spec may follow it positionally.
    def factory(host: Host, args: Bound, call: Call) -> Value:
        body = args.positional[0] if args.positional else args.keywords.get("body")
        if body is None and "kernel" in args.keywords:
            body = args.keywords["kernel"]
        kwargs = dict(args.keywords)
        if api == "pl.pallas_call" and len(args.positional) > 1:
            kwargs.setdefault("out_shape", args.positional[1])
        if api == "plgpu.kernel" and len(args.positional) > 1:
            kwargs.setdefault("out_type", args.positional[1])
        if blind or not args.complete:
            kwargs["compiler_params"] = UNKNOWN
            kwargs["__blind__"] = TRUE
        return Kernel(api, body, tuple(kwargs.items()))

    return factory


for _api in _FACTORIES:
    model(_api, signature="(*args, **kwargs)")(_kernel_factory(_api))
# `self.pallas_call(...)` of a test base class defined elsewhere: its parameters are unknown.
model("pl.pallas_call.unknown_params", signature="(*args, **kwargs)")(_kernel_factory("pl.pallas_call", blind=True))

# Test classes built on jax's PallasTest call `self.kernel(...)` / `self.pallas_call(...)`,
# thin wrappers of plgpu.kernel / pl.pallas_call whose definition may live elsewhere.
REGISTRY.instance_attributes["kernel"] = lambda: Kernel("plgpu.kernel", None, (("compiler_params", UNKNOWN),))
REGISTRY.instance_attributes["pallas_call"] = lambda: Api("pl.pallas_call.unknown_params")


@partial_of(*_FACTORIES)
def _partial_factory(func: Value, args: Args) -> Value | None:
    assert isinstance(func, Api)
    return Kernel(func.name, None, tuple(args.keywords.items()))


@partial_of(kinds=(Kernel,))
def _partial_kernel(func: Value, args: Args) -> Value | None:
    assert isinstance(func, Kernel)
    if func.body is None:
        return Kernel(func.api, None, (*func.kwargs, *args.keywords.items()))
    return None


@partial_of("pl.run_scoped")
def _partial_run_scoped(func: Value, args: Args) -> Value | None:
    return Partial(func, tuple(args.positional[1:]), tuple(args.keywords.items()))


_BODY = Signature.parse("(body, ...)")


@callable_kind(Kernel)
def _call_kernel(host: Host, kernel: Value, raw: Args, call: Call) -> Value:
    assert isinstance(kernel, Kernel)
    if kernel.body is None:
        # `@plgpu.kernel(out_type=...)` / `functools.partial(plgpu.kernel, ...)` on a body,
        # maybe with more keywords: `partial(plgpu.kernel, compiler_params=...)(body, out_type=...)`.
        body = Bound(raw, _BODY)["body"]
        merged = {**dict(kernel.kwargs), **raw.keywords}
        merged.pop("body", None)
        if len(raw.positional) > 1:
            key = "out_shape" if kernel.api == "pl.pallas_call" else "out_type"
            merged.setdefault(key, raw.positional[1])
        if not raw.complete:
            merged["__blind__"] = TRUE
        return Kernel(kernel.api, body, tuple(merged.items()), kernel.self_value, origin=kernel.origin)
    kwargs = dict(kernel.kwargs)
    if kernel.api == "plgpu.emit_pipeline":
        return _run_pipeline(host, kernel, kwargs, raw, call)
    refs: list[Value] = []
    complete = raw.complete and "__blind__" not in kwargs
    torch_inputs = "__torch__" in kwargs  # dtypes of torch tensors are not modelled
    for value in raw.positional:
        ref = as_ref(value) if complete and not torch_inputs else UNKNOWN
        if isinstance(ref, Ref):
            # jax converts kernel inputs to jax arrays: 64-bit data is 32-bit without x64.
            # They stay in global memory, row-major.
            ref = Ref(jax_dtype(host, ref.dtype), ref.shape, origin=ref.origin, view="plain")
        refs.append(ref)
    out = kwargs.get("out_type", kwargs.get("out_shape"))
    scratch = kwargs.get("scratch_types", kwargs.get("scratch_shapes", TupleVal(())))
    scratch_keywords: dict[str, Value] = {}
    if isinstance(scratch, DictVal):
        # A dict of scratch types reaches the body as keyword arguments.
        scratch_keywords = {k: as_ref(v) for k, v in scratch.items}
        scratch = TupleVal(())
    for tree, view in ((out, "plain"), (scratch, None)):
        found = leaves(tree) if tree is not None else None
        if found is None:
            complete = False
            break
        refs.extend(as_ref(leaf, view=view) for leaf in found)
    if kernel.api == "pl.pallas_call" and complete:
        # Blocked refs keep their dtype; their shape is the block shape when a spec says so.
        specs = _specs(kwargs.get("in_specs"), kwargs.get("out_specs"))
        refs = [Ref(r.dtype, _block_shape(specs, i)) if isinstance(r, Ref) else r for i, r in enumerate(refs)]
    params = kwargs.get("compiler_params", NONE)
    semantics: Value
    if is_none(params):
        # The note belongs where `compiler_params=` would go: the plgpu.kernel(...) call.
        semantics = Semantics("default", origin=kernel.origin or call.origin)
    elif isinstance(params, CompilerParams):
        semantics = params.semantics
    else:
        semantics = UNKNOWN
    if not complete:
        refs = []
    with host.with_context(in_kernel=True, semantics=semantics), contextlib.suppress(Diverges):
        host.call_value(kernel.body, Args(refs, scratch_keywords, [], {}, complete), call.node, call.frame,
                        call.block)
    return _out_arrays(out, call)


def _run_pipeline(host: Host, kernel: Kernel, kwargs: dict[str, Value], raw: Args, call: Call) -> Value:
    refs: list[Value] = [UNKNOWN]  # the step indices
    specs = _specs(kwargs.get("in_specs"), kwargs.get("out_specs"))
    for i, value in enumerate(raw.positional):
        refs.append(Ref(value.dtype, _block_shape(specs, i)) if isinstance(value, Ref) else UNKNOWN)
    carry = kwargs.get("init_carry")
    complete = raw.complete and carry is not None
    if complete and carry is not None and not is_none(carry):
        refs.append(carry)
    result: Value = UNKNOWN
    if kernel.body is None:
        return UNKNOWN
    with contextlib.suppress(Diverges):
        result = host.call_value(kernel.body, Args(refs, {}, [], {}, complete), call.node, call.frame, call.block)
    if carry is None or is_none(carry):
        return NONE
    return join(carry, result)


def _specs(in_specs: Value | None, out_specs: Value | None) -> list[Value] | None:
    """The block specs of a pallas_call / emit_pipeline, inputs then outputs, or None."""
    if in_specs is None or is_none(in_specs):
        return None  # inputs without specs: nothing lines up with the refs
    specs: list[Value] = []
    for group in (in_specs, out_specs):
        if group is None or is_none(group):
            continue
        if isinstance(group, BlockSpecVal):
            specs.append(group)
        elif isinstance(group, TupleVal) and not any(isinstance(i, TupleVal | DictVal) for i in group.items):
            specs.extend(group.items)
        else:
            return None  # a nested pytree of specs: its leaves may not line up one to one
    return specs


def _block_shape(specs: list[Value] | None, i: int) -> Value:
    """The shape of the block the i-th spec gives the body: its block_shape, `None` axes
    squeezed; unknown without such a spec."""
    spec = specs[i] if specs is not None and i < len(specs) else None
    if not isinstance(spec, BlockSpecVal) or not isinstance(spec.block_shape, TupleVal):
        return UNKNOWN
    dims: list[Value] = []
    for d in spec.block_shape.items:
        if is_none(d):
            continue
        if as_int(d) is None:
            return UNKNOWN
        dims.append(d)
    return TupleVal(tuple(dims))


def _out_arrays(out: Value | None, call: Call) -> Value:
    if isinstance(out, Array):
        return Array(out.dtype, out.shape, UNKNOWN, created=Origin(call.block, call.node), how="kernel output")
    if isinstance(out, TupleVal):
        return TupleVal(tuple(_out_arrays(i, call) for i in out.items))
    return UNKNOWN


@model("plgpu.as_torch_kernel", signature="(fn)")
def _as_torch_kernel(host: Host, args: Bound, call: Call) -> Value:
    """`plgpu.as_torch_kernel(kernel)(x, y)`: a launch whose inputs are torch tensors."""
    kernel = args["fn"]
    if isinstance(kernel, Kernel) and kernel.body is not None:
        return Kernel(kernel.api, kernel.body, (*kernel.kwargs, ("__torch__", TRUE)), kernel.self_value)
    return UNKNOWN


@model("pl.cdiv", signature="(a, b)")
def _cdiv(host: Host, args: Bound, call: Call) -> Value:
    """`pl.cdiv(n, block)` of two Python ints: `(n + block - 1) // block` (a grid's length)."""
    a, b = as_int(args["a"]), as_int(args["b"])
    if a is None or b is None or b <= 0 or not (abs(a) < 1 << 62 and b < 1 << 62):
        return UNKNOWN
    return Const(-(-a // b))


@model("pl.BlockSpec", "plgpu.BlockSpec", signature="(block_shape=None, ...)")
def _block_spec(host: Host, args: Bound, call: Call) -> Value:
    return BlockSpecVal(args["block_shape"])


@model("plgpu.GMEM", "pl.MemoryRef", signature="(shape, dtype=None, ...)")
def _scratch(host: Host, args: Bound, call: Call) -> Value:
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = UNKNOWN
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how="scratch")


@model("plgpu.SMEM", signature="(shape, dtype=None, *, transforms=(), ...)")
def _smem(host: Host, args: Bound, call: Call) -> Value:
    """SMEM scratch: allocated row-major (its transforms tile it, keeping the minor axis)."""
    dtype = to_dtype(args["dtype"])
    if is_none(dtype):
        dtype = UNKNOWN
    return Array(dtype, as_shape_value(args["shape"]), UNKNOWN, created=call.origin, how=SMEM_SCRATCH,
                 swizzle=_swizzle(args["transforms"]) if args.given("transforms") else None,
                 tiling=smem_tiling(args["transforms"]) if args.given("transforms") else None)


def _swizzle(transforms: Value) -> int | None:
    """The bytes of the one `SwizzleTransform` among `transforms`, when they are all known."""
    if not isinstance(transforms, TupleVal):
        return None
    found = [as_int(t.items[1]) for t in transforms.items
             if isinstance(t, TupleVal) and len(t.items) == 2 and t.items[0] == Const(SWIZZLE_TRANSFORM)]
    return found[0] if len(found) == 1 else None


@model("plgpu.SwizzleTransform", signature="(swizzle)")
def _swizzle_transform(host: Host, args: Bound, call: Call) -> Value:
    return TupleVal((Const(SWIZZLE_TRANSFORM), args["swizzle"]))


# How `plgpu.SwizzleTransform(s)` reads: a tagged pair, as `pl.ds` is.
SWIZZLE_TRANSFORM = "swizzle transform"


def smem_tiling(transforms: Value) -> tuple[int, ...] | None:
    """The tile of the one `TilingTransform` among `transforms`, when every transform is known
    (a tiling or a swizzle): what Pallas hands the MMA lowering as the ref's untiling."""
    if not isinstance(transforms, TupleVal):
        return None
    tags = [t.items[0] if isinstance(t, TupleVal) and len(t.items) == 2 else None for t in transforms.items]
    if any(tag not in (Const(SWIZZLE_TRANSFORM), Const(TILING_TRANSFORM)) for tag in tags):
        return None
    tilings = [t.items[1] for t, tag in zip(transforms.items, tags, strict=True)
               if isinstance(t, TupleVal) and tag == Const(TILING_TRANSFORM)]
    tiling = tilings[0] if len(tilings) == 1 else None
    if not isinstance(tiling, TupleVal):
        return None
    tile = [as_int(d) for d in tiling.items]
    return tuple(d for d in tile if d is not None) if None not in tile and tile else None


@model("plgpu.TilingTransform", signature="(tiling)")
def _tiling_transform(host: Host, args: Bound, call: Call) -> Value:
    return TupleVal((Const(TILING_TRANSFORM), args["tiling"]))


# How `plgpu.TilingTransform(t)` reads: a tagged pair like the swizzle's.
TILING_TRANSFORM = "tiling transform"


@model("pl.run_scoped", signature="(f, *types, **kw_types)")
def _run_scoped(host: Host, args: Bound, call: Call) -> Value:
    refs = [as_ref(v) for v in args.positional[1:]]
    kw = {k: as_ref(v) for k, v in args.keywords.items() if k != "collective_axes"}
    return host.call_value(args["f"], Args(refs, kw, [], {}, args.complete), call.node, call.frame, call.block)


model("pl.when", signature="(condition)")(when)
model("plgpu.nd_loop", "pl.loop", "plgpu.dynamic_scheduling_loop", "pl.core_map", "plgpu.kernel.body",
      signature="(...)")(blind_decorator)

value_kinds(Kernel, truthy=True)
