"""Mosaic GPU kernel launches (`mgpu.as_gpu_kernel`) and its control-flow helpers."""

from __future__ import annotations

import contextlib

from mmalint.analysis.host import Args, Bound, Call, Diverges, Host, model
from mmalint.analysis.models.arrays import TMEM_SCRATCH, as_ref, leaves
from mmalint.analysis.values import UNKNOWN, Api, Array, Ref, Semantics, TupleVal, Value


@model(
    "mgpu.as_gpu_kernel",
    signature="(body, grid, block, in_shape, out_shape, smem_scratch_shape, prof_spec=None, cluster,"
    " module_name='unknown', kernel_name=None, ir_version=None, thread_semantics, inout_shape=())",
)
def _as_gpu_kernel(host: Host, args: Bound, call: Call) -> Value:
    """The body runs in a kernel with refs for the inputs, in-outs, outputs and scratch."""
    refs: list[Value] = [UNKNOWN]  # the launch context
    complete = True
    for tree in (args["in_shape"], args["inout_shape"], args["out_shape"]):
        found = leaves(tree)
        if found is None:
            complete = False
            break
        refs.extend(as_ref(leaf, view="plain") for leaf in found)
    if complete:
        scratch = scratch_tree(args["smem_scratch_shape"])
        refs.append(scratch if _lane_semantics(args) else _without_tmem_layouts(scratch))
    with host.with_context(in_kernel=True, semantics=UNKNOWN), contextlib.suppress(Diverges):
        host.call_value(args["body"], Args(refs, {}, [], {}, complete), call.node, call.frame, call.block)
    return UNKNOWN


def scratch_tree(tree: Value) -> Value:
    if isinstance(tree, TupleVal):
        return TupleVal(tuple(scratch_tree(i) for i in tree.items), tree.is_list)
    if isinstance(tree, Array) and tree.how not in ("scratch", TMEM_SCRATCH):
        return as_ref(tree, view="plain", space="smem")  # a `ShapeDtypeStruct`: row-major SMEM
    return as_ref(tree)


def _lane_semantics(args: Bound) -> bool:
    """Whether the kernel runs under Lane semantics (`thread_semantics=`, Lane by default), where
    a TMEM scratch entry is a `tcgen05.TMEMRef` of the layout its packing gives."""
    if not args.given("thread_semantics"):
        return args.complete
    semantics = args["thread_semantics"]
    return isinstance(semantics, Semantics) and semantics.name == "lane"


def _without_tmem_layouts(tree: Value) -> Value:
    """The scratch refs of a kernel of other (or unknown) semantics: a TMEM entry is then a
    memref whose layout the dialect infers, so neither its space nor its packing is claimed."""
    if isinstance(tree, TupleVal):
        return TupleVal(tuple(_without_tmem_layouts(i) for i in tree.items), tree.is_list)
    if isinstance(tree, Ref) and tree.space == "tmem":
        return Ref(tree.dtype, tree.shape, origin=tree.origin)
    return tree


def when(host: Host, args: Bound, call: Call) -> Value:
    """`@when(cond)`: a body that runs if `cond` holds (never when it is known false)."""
    condition = host.truth(args["condition"])
    return Api("builtins.never_decorator" if condition is False else "builtins.call_blind_decorator")


def blind_decorator(host: Host, args: Bound, call: Call) -> Value:
    """Loops and scopes that run their body with indices nobody knows."""
    return Api("builtins.call_blind_decorator")


model("mgpu.utils.when", signature="(condition)")(when)
model("mgpu.utils.fori", signature="(...)")(blind_decorator)
