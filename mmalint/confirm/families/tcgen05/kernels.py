"""Synthesized jax kernels around one Blackwell MMA call (imported only inside worker
processes, through `families.worker_module("tcgen05", "kernels")`).

`mgpu.tcgen05.mma` is built the way jax's own `_basic_mma_test` builds it (`as_gpu_kernel` on
one warpgroup, A and B copied to SMEM by TMA tiled `(8, swizzle / itemsize)`, B stored as
(n, k) and read through `memref_transpose(b, (1, 0, 3, 2))`, the accumulator a
`mgpu.TMEM((m, n), dtype)` scratch, the MMA issued by one thread with `accumulate=False`);
`plgpu.tcgen05_mma` the way the Pallas tests do (`plgpu.kernel`, SMEM with
`TilingTransform`/`SwizzleTransform`, `plgpu.TMEM`, `plgpu.transpose_ref(b, (1, 0))`,
`tcgen05_commit_arrive` and `async_load_tmem`). Lowered on the CPU for sm_100a
(`target_arch`). The instruction descriptor jax builds is read back from jax's own
`create_instr_descriptor`, so a silent sign mix-up shows in it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import jax
import jax.numpy as jnp

from mmalint.confirm.families.mma.kernels import (
    _module,
    loaded_positions,
    lowered_text,
    memory_shape,
    mlir_context,
)
from mmalint.confirm.families.smem_kernels import (
    as_device_array,
    input_structs,
    itemsize,
    jnp_dtype,
    out_struct,
    probe_api,
    tile_shape,
    tiling,
)
from mmalint.confirm.families.tcgen05 import MGPU_API, PALLAS_API
from mmalint.confirm.families.tcgen05.descriptor import describe
from mmalint.confirm.families.wgmma.kernels import target_arch

Spec = dict[str, Any]

__all__ = ["as_device_array", "build", "build_context", "device_problem", "import_apis",
           "instructions_in", "loaded_positions", "lowered_text", "missing_api", "probe_api",
           "uses_pallas"]

_KIND = re.compile(r"tcgen05\.mma(?:\.sp)?\.cta_group::\d\.kind::[a-z0-9]+(?:\.block_scale)?")
# The descriptors jax built while the current case was lowered (see `_record_descriptors`).
_DESCRIPTORS: list[int] = []


def uses_pallas(api: str) -> bool:
    return api == PALLAS_API


def import_apis(*, pallas: bool) -> None:
    _module("jax.experimental.mosaic.gpu.tcgen05")
    if pallas:
        _module("jax.experimental.pallas.mosaic_gpu")


def missing_api(api: str) -> str | None:
    del api
    return None


def device_problem(compute_capability: str | None) -> str | None:
    """tcgen05 exists only on Blackwell: an H200 (sm 9.0) cannot run it."""
    if compute_capability is not None and str(compute_capability).split(".")[0] in ("10", "11"):
        return None
    return (f"tcgen05 needs a Blackwell (sm_100a) GPU; this GPU is sm {compute_capability} "
            "(its build-time checks run in the jax tier)")


def instructions_in(text: str) -> list[str]:
    """The `tcgen05.mma` instructions of a lowered module, each with the operand and
    accumulator types of the instruction descriptor jax built for it."""
    kinds = sorted(set(_KIND.findall(text)))
    if not _DESCRIPTORS:
        return kinds
    return sorted({f"{kind} [{describe(d, kind.split('kind::')[1].split('.')[0])}]"
                   for kind in kinds for d in _DESCRIPTORS})


@contextlib.contextmanager
def _record_descriptors() -> Iterator[None]:
    """Keep the value of every instruction descriptor jax's `create_instr_descriptor` returns
    (an `arith.constant` i32) while the kernel is built."""
    tcgen05 = _module("jax.experimental.mosaic.gpu.tcgen05")
    ir = _module("jax._src.lib.mlir.ir")
    original = tcgen05.create_instr_descriptor
    _DESCRIPTORS.clear()

    def recording(*args: Any, **kwargs: Any) -> Any:
        value = original(*args, **kwargs)
        # An unreadable constant only loses the evidence, not the case.
        with contextlib.suppress(Exception):
            _DESCRIPTORS.append(int(ir.IntegerAttr(value.owner.attributes["value"]).value))
        return value

    tcgen05.create_instr_descriptor = recording
    try:
        yield
    finally:
        tcgen05.create_instr_descriptor = original


@contextlib.contextmanager
def _context(spec: Spec) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        stack.enter_context(target_arch(spec["arch"]))
        stack.enter_context(_record_descriptors())
        if spec["api"] == MGPU_API:
            stack.enter_context(mlir_context())
        yield


def build_context(spec: Spec) -> AbstractContextManager[None]:
    return _context(spec)
















def _unit_scales(scales: Sequence[Spec]) -> list[Any]:
    """The SMEM-shaped data of the scales filled from SMEM: all 1.0 (e8m0 and e4m3 both have
    it), so the scaled product is the plain one."""
    return [jnp.ones(tuple(s["smem_shape"]), jnp_dtype(s["dtype"])) for s in scales if s["copied"]]


def _with_unit_scales(kernel: Callable[..., Any], scales: Sequence[Spec]) -> Callable[..., Any]:
    """`kernel(a, b, *scales)` as a function of A and B alone (what the tiers pass it)."""
    if not any(s["copied"] for s in scales):
        return kernel

    def call(a: Any, b: Any) -> Any:
        return kernel(a, b, *_unit_scales(scales))

    return call


def build_mgpu(spec: Spec, in_shapes: Sequence[Any]) -> Callable[..., Any]:
    """`as_gpu_kernel` around `tcgen05.mma(d, a, b, ...)`; building it runs every check of
    `mma()` and of `_do_mma` (inside `mlir_context`). Block scales, when the call passes
    them, are TMEM refs in `scales_layout()` filled from SMEM by
    `async_copy_scales_smem_to_tmem`, as jax's block-scaled tests do."""
    mgpu = _module("jax.experimental.mosaic.gpu")
    tcgen05 = _module("jax.experimental.mosaic.gpu.tcgen05")
    utils = _module("jax.experimental.mosaic.gpu.utils")

    d_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    m, n = d_v["shape"]
    a_swizzle, b_swizzle = int(spec["a_swizzle"]), int(spec["b_swizzle"])
    # The operands are staged with the swizzle the MMA is told, unless the program staged them
    # with another (`a_copy_swizzle`: the MMA then reads them with the wrong one).
    a_copy = int(spec.get("a_copy_swizzle") or a_swizzle)
    b_copy = int(spec.get("b_copy_swizzle") or b_swizzle)
    a_tiling, b_tiling = tiling(a_v["dtype"], a_copy), tiling(b_v["dtype"], b_copy)
    collective = bool(spec["options"].get("collective"))
    scales: list[Spec] = list(spec.get("scales") or [])
    copied = [s for s in scales if s["copied"]]

    def body(ctx: Any, a_gmem: Any, b_gmem: Any, *refs: Any) -> None:
        *scale_gmem, out, scratch = refs
        a_smem, b_smem, barriers, mma_barrier, d_tmem, *scale_scratch = scratch
        scale_smem, scale_tmem = scale_scratch[:len(copied)], scale_scratch[len(copied):]
        ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=a_copy,
                       gmem_transform=mgpu.TileTransform(a_tiling), barrier=barriers[0])
        ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=b_copy,
                       gmem_transform=mgpu.TileTransform(b_tiling), barrier=barriers[1])
        for i, (src, dst) in enumerate(zip(scale_gmem, scale_smem, strict=True)):
            ctx.async_copy(src_ref=src, dst_ref=dst, barrier=barriers[2 + i])
        for i in range(2 + len(copied)):
            barriers[i].wait()
        tmem_of = dict(zip((s["side"] for s in scales), scale_tmem, strict=True))
        # B is (n, k) in memory and read K-major, unless the call reads a (k, n) B N-major;
        # A is (m, k), unless the call reads a (k, m) A M-major (the K group cases).
        a_ref = utils.memref_transpose(a_smem, (1, 0, 3, 2)) if a_v.get("transposed") else a_smem
        b_ref = (utils.memref_transpose(b_smem, (1, 0, 3, 2)) if b_v.get("transposed", True)
                 else b_smem)
        with mgpu.single_thread():
            for s, smem in zip(copied, scale_smem, strict=True):
                tcgen05.async_copy_scales_smem_to_tmem(smem, tmem_of[s["side"]])
            tcgen05.mma(d_tmem, a_ref, b_ref,
                        a_swizzle=a_swizzle, b_swizzle=b_swizzle, accumulate=False,
                        **({"collective": True} if collective else {}),
                        **{f"{side}_scale": ref for side, ref in tmem_of.items()})
            tcgen05.commit_arrive(mma_barrier)
        mma_barrier.wait(orders_tensor_core=True)
        d_tmem.load(is_signed=d_v["is_signed"]).store_untiled(out, optimized=False)

    n_barriers = 2 + len(copied)
    barrier = (mgpu.TMABarrier(n_barriers) if hasattr(mgpu, "TMABarrier")
               else mgpu.Barrier(arrival_count=1, num_barriers=n_barriers))
    scratch = (
        jax.ShapeDtypeStruct(tile_shape(memory_shape(a_v), a_tiling), jnp_dtype(a_v["dtype"])),
        jax.ShapeDtypeStruct(tile_shape(memory_shape(b_v), b_tiling), jnp_dtype(b_v["dtype"])),
        barrier,
        mgpu.Barrier(arrival_count=1),
        mgpu.TMEM((m, n), jnp_dtype(d_v["dtype"])),
        *(jax.ShapeDtypeStruct(tuple(s["smem_shape"]), jnp_dtype(s["dtype"])) for s in copied),
        *(mgpu.TMEM(tuple(s["shape"]), jnp_dtype(s["dtype"]), layout=tcgen05.scales_layout())
          for s in scales),
    )
    scale_shapes = [jax.ShapeDtypeStruct(tuple(s["smem_shape"]), jnp_dtype(s["dtype"]))
                    for s in copied]
    kernel = mgpu.as_gpu_kernel(body, (1, 1, 1), (128, 1, 1),
                                (*in_shapes, *scale_shapes), out_struct(spec), scratch)
    return _with_unit_scales(kernel, scales)


def build_pallas(spec: Spec) -> Callable[..., Any]:
    """`plgpu.kernel` around `plgpu.tcgen05_mma(d, a, b, barrier, ...)`: the front end (shapes,
    scales) runs when it is traced, `tcgen05.mma()`'s checks when it is lowered. Block scales
    are `plgpu.TMEM(..., layout=TMEMLayout.SCALES_LAYOUT)` refs filled from SMEM by
    `plgpu.async_copy_scales_to_tmem`, as Pallas's `test_simple_scaled_matmul` does."""
    plgpu = _module("jax.experimental.pallas.mosaic_gpu")

    d_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    m, n = d_v["shape"]
    a_swizzle, b_swizzle = int(spec["a_swizzle"]), int(spec["b_swizzle"])
    semantics = (plgpu.LoweringSemantics.Warpgroup if spec["semantics"] == "warpgroup"
                 else plgpu.LoweringSemantics.Lane)
    scales: list[Spec] = list(spec.get("scales") or [])
    copied = [s for s in scales if s["copied"]]

    def transforms(dtype: str, swizzle: int) -> tuple[Any, ...]:
        return (plgpu.TilingTransform(tiling(dtype, swizzle)), plgpu.SwizzleTransform(swizzle))

    def body(a_gmem: Any, b_gmem: Any, *refs: Any) -> None:
        # Inputs (A, B, the scales filled from SMEM), the output, then the scratch below.
        scale_gmem, (o_gmem, a_smem, b_smem, d_tmem, tma_barrier, mma_barrier, *scale_refs) = (
            refs[:len(copied)], refs[len(copied):])
        scale_smem, scale_tmem = scale_refs[:len(copied)], scale_refs[len(copied):]
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
        for src, dst in zip(scale_gmem, scale_smem, strict=True):
            plgpu.copy_gmem_to_smem(src, dst, tma_barrier)
        plgpu.barrier_wait(tma_barrier)
        tmem_of = dict(zip((s["side"] for s in scales), scale_tmem, strict=True))
        for s, smem in zip(copied, scale_smem, strict=True):
            plgpu.async_copy_scales_to_tmem(smem, tmem_of[s["side"]])
        a_ref = plgpu.transpose_ref(a_smem, (1, 0)) if a_v.get("transposed") else a_smem
        b_ref = plgpu.transpose_ref(b_smem, (1, 0)) if b_v.get("transposed", True) else b_smem
        plgpu.tcgen05_mma(d_tmem, a_ref, b_ref, mma_barrier, accumulate=False,
                          **{f"{side}_scale": ref for side, ref in tmem_of.items()})
        plgpu.barrier_wait(mma_barrier)
        o_gmem[...] = plgpu.async_load_tmem(d_tmem)

    kernel = plgpu.kernel(
        body, out_type=out_struct(spec),
        scratch_types=[
            plgpu.SMEM(tuple(memory_shape(a_v)), jnp_dtype(a_v["dtype"]),
                       transforms=transforms(a_v["dtype"], a_swizzle)),
            plgpu.SMEM(tuple(memory_shape(b_v)), jnp_dtype(b_v["dtype"]),
                       transforms=transforms(b_v["dtype"], b_swizzle)),
            plgpu.TMEM((m, n), jnp_dtype(d_v["dtype"]), packed=False),
            plgpu.Barrier(num_arrivals=2 + len(copied)),
            plgpu.Barrier(orders_tensor_core=True),
            *(plgpu.SMEM(tuple(s["smem_shape"]), jnp_dtype(s["dtype"])) for s in copied),
            *(plgpu.TMEM(tuple(s["shape"]), jnp_dtype(s["dtype"]),
                         layout=plgpu.TMEMLayout.SCALES_LAYOUT) for s in scales),
        ],
        compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
    )
    return _with_unit_scales(kernel, scales)


def build(spec: Spec) -> tuple[Callable[..., Any], list[jax.ShapeDtypeStruct]]:
    structs = input_structs(spec)
    if spec.get("tmem_a") is not None:
        if spec["api"] == PALLAS_API:
            return build_pallas_tmem_a(spec), structs
        return build_mgpu_tmem_a(spec, structs), structs
    if spec["api"] == PALLAS_API:
        return build_pallas(spec), structs
    return build_mgpu(spec, structs), structs


# ---------------------------------------------------------------- A in TMEM (MMA713-715)
#
# The kernels of the rules about A in TMEM, built the way jax's tests build them
# (`_basic_mma_lhs_tmem_test`, `test_mma_sparse_lhs_tmem`, Pallas `test_integer_matmul` with
# `lhs_tmem`): A allocated in TMEM with the packing (and collectiveness) the signature gives,
# filled from SMEM by `async_copy_smem_to_tmem` when it is a 128-row fully packed ref (what
# tcgen05.cp writes; any other A in TMEM fails in `mma()` first, and is left unfilled), block
# scales and sparsity metadata in TMEM when the call has them. Their fixes (A in SMEM) are the
# same kernel with A read from SMEM. A sparse MMA's B has twice A's K.


def _tmem_a_case(spec: Spec) -> dict[str, Any]:
    d_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    options = spec["options"]
    m, n = d_v["shape"]
    k = int(a_v["shape"][1])
    kb, nb = (int(x) for x in b_v["shape"])  # a sparse MMA's B has twice A's K
    sparse = bool(options.get("sparse"))
    collective = bool(options.get("collective"))
    tmem = spec["tmem_a"]
    bits = 8 * itemsize(a_v["dtype"]) if a_v["dtype"] != "float4_e2m1fn" else 4
    packing = tmem.get("packing")
    in_tmem = a_v.get("memory_space") == "tmem"
    return {
        "d": d_v, "a": a_v, "b": b_v, "m": int(m), "n": int(n), "k": k, "kb": kb,
        # A collective MMA's accumulator spans both CTAs' B: each CTA holds half of N.
        "nb": nb,
        "sparse": sparse, "collective": collective,
        "scaled": bool(options.get("a_scale")) and bool(options.get("b_scale")),
        "in_tmem": in_tmem, "packing": packing,
        "fill": in_tmem and packing == 32 // bits and int(m) == 128,
        "a_collective": tmem.get("collective"),
        "d_collective": True if collective else tmem.get("d_collective"),
        "a_swizzle": int(spec["a_swizzle"]), "b_swizzle": int(spec["b_swizzle"]),
    }


def _scale_block(case: dict[str, Any]) -> int:
    # MXFP8: one e8m0 scale per 32 elements of K (64 of the logical K of a 2:4 sparse MMA).
    return 64 if case["sparse"] else 32


def build_mgpu_tmem_a(spec: Spec, in_shapes: Sequence[Any]) -> Callable[..., Any]:
    """`as_gpu_kernel` around `tcgen05.mma(d, a, b, ...)` with A an `mgpu.TMEM` ref (or, for a
    fix, the SMEM ref it was copied from)."""
    mgpu = _module("jax.experimental.mosaic.gpu")
    tcgen05 = _module("jax.experimental.mosaic.gpu.tcgen05")
    utils = _module("jax.experimental.mosaic.gpu.utils")
    case = _tmem_a_case(spec)
    d_v, a_v, b_v = case["d"], case["a"], case["b"]
    m, n, k, kb = case["m"], case["n"], case["k"], case["kb"]
    a_swizzle, b_swizzle = case["a_swizzle"], case["b_swizzle"]
    a_tiling, b_tiling = tiling(a_v["dtype"], a_swizzle), tiling(b_v["dtype"], b_swizzle)

    def body(ctx: Any, a_gmem: Any, b_gmem: Any, out: Any, scratch: Any) -> None:
        a_smem, b_smem, barriers, mma_barrier, d_tmem, a_tmem, *extra = scratch
        ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=a_swizzle,
                       gmem_transform=mgpu.TileTransform(a_tiling), barrier=barriers[0])
        ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=b_swizzle,
                       gmem_transform=mgpu.TileTransform(b_tiling), barrier=barriers[1])
        barriers[0].wait()
        barriers[1].wait()
        kwargs: dict[str, Any] = {}
        if case["scaled"]:
            kwargs.update(a_scale=extra[0], b_scale=extra[1])
        if case["sparse"]:
            kwargs["a_sparse_metadata"] = extra[-1]
        if case["collective"]:
            kwargs["collective"] = True
        with mgpu.single_thread():
            if case["fill"]:
                tcgen05.async_copy_smem_to_tmem(a_smem, a_tmem, swizzle=a_swizzle)
            tcgen05.mma(d_tmem, a_tmem if case["in_tmem"] else a_smem,
                        utils.memref_transpose(b_smem, (1, 0, 3, 2)),
                        a_swizzle=a_swizzle, b_swizzle=b_swizzle, accumulate=False, **kwargs)
            tcgen05.commit_arrive(mma_barrier)
        mma_barrier.wait(orders_tensor_core=True)
        d_tmem.load(is_signed=d_v["is_signed"]).store_untiled(out, optimized=False)

    barrier = (mgpu.TMABarrier(2) if hasattr(mgpu, "TMABarrier")
               else mgpu.Barrier(arrival_count=1, num_barriers=2))
    packing = {} if case["packing"] is None else {"packing": case["packing"]}
    scratch: list[Any] = [
        jax.ShapeDtypeStruct(tile_shape((m, k), a_tiling), jnp_dtype(a_v["dtype"])),
        jax.ShapeDtypeStruct(tile_shape((case["nb"], kb), b_tiling), jnp_dtype(b_v["dtype"])),
        barrier,
        mgpu.Barrier(arrival_count=1),
        mgpu.TMEM((m, n), jnp_dtype(d_v["dtype"])),
        # No A in TMEM for a fix that reads A from SMEM (jax's tests pass None then).
        mgpu.TMEM((m, k), jnp_dtype(a_v["dtype"]), **packing) if case["in_tmem"] else None,
    ]
    if case["scaled"]:
        block = _scale_block(case)
        scratch += [mgpu.TMEM((rows, kb // block), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout())
                    for rows in (128, -(-n // 128) * 128)]
    if case["sparse"]:
        scratch.append(mgpu.TMEM((m, k), jnp.uint2, layout=tcgen05.sparse_meta_layout()))
    return mgpu.as_gpu_kernel(body, (1, 1, 1), (128, 1, 1), tuple(in_shapes), out_struct(spec),
                              tuple(scratch))


def build_pallas_tmem_a(spec: Spec) -> Callable[..., Any]:
    """`plgpu.kernel` around `plgpu.tcgen05_mma(d, a, b, barrier, ...)` with A a `plgpu.TMEM`
    ref (or, for a fix, the SMEM ref it was copied from); a collective MMA runs on a cluster
    of two CTAs (`collective_axis="x"`)."""
    plgpu = _module("jax.experimental.pallas.mosaic_gpu")
    case = _tmem_a_case(spec)
    d_v, a_v, b_v = case["d"], case["a"], case["b"]
    m, n, nb, k, kb = case["m"], case["n"], case["nb"], case["k"], case["kb"]
    a_swizzle, b_swizzle = case["a_swizzle"], case["b_swizzle"]
    semantics = (plgpu.LoweringSemantics.Warpgroup if spec["semantics"] == "warpgroup"
                 else plgpu.LoweringSemantics.Lane)
    full = case["packing"] is not None and case["fill"]
    staged = m != 128 and spec["semantics"] == "warpgroup"

    def transforms(dtype: str, swizzle: int) -> tuple[Any, ...]:
        return (plgpu.TilingTransform(tiling(dtype, swizzle)), plgpu.SwizzleTransform(swizzle))

    def body(a_gmem: Any, b_gmem: Any, o_gmem: Any, a_smem: Any, b_smem: Any, d_tmem: Any,
             a_tmem: Any, tma_barrier: Any, mma_barrier: Any, *extra: Any) -> None:
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
        plgpu.barrier_wait(tma_barrier)
        if full:
            # A collective kernel's TMEM ops are all collective (the Warpgroup lowering checks).
            copy_kwargs = {"collective_axis": "x"} if case["collective"] else {}
            plgpu.async_copy_smem_to_tmem(a_smem, a_tmem, **copy_kwargs)
        kwargs: dict[str, Any] = {}
        if case["scaled"]:
            kwargs.update(a_scale=extra[0], b_scale=extra[1])
        if case["sparse"]:
            kwargs["a_sparse_metadata"] = extra[-2 if staged else -1]
        if case["collective"]:
            kwargs["collective_axis"] = "x"
        plgpu.tcgen05_mma(d_tmem, a_tmem if case["in_tmem"] else a_smem,
                          plgpu.transpose_ref(b_smem, (1, 0)), mma_barrier, accumulate=False, **kwargs)
        plgpu.barrier_wait(mma_barrier)
        if staged:
            # A 64-row accumulator's half-lane layout cannot go to GMEM directly: through SMEM.
            out_smem = extra[-1]
            out_smem[...] = plgpu.async_load_tmem(d_tmem)
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(out_smem, o_gmem)
            plgpu.wait_smem_to_gmem(0)
        else:
            o_gmem[...] = plgpu.async_load_tmem(d_tmem)

    a_alloc: dict[str, Any] = {}
    if case["packing"] is not None:
        a_alloc["packed"] = case["packing"] > 1
    if case["a_collective"] is not None:
        a_alloc["collective"] = case["a_collective"]
    scratch: list[Any] = [
        plgpu.SMEM((m, k), jnp_dtype(a_v["dtype"]), transforms=transforms(a_v["dtype"], a_swizzle)),
        plgpu.SMEM((nb, kb), jnp_dtype(b_v["dtype"]), transforms=transforms(b_v["dtype"], b_swizzle)),
        plgpu.TMEM((m, n), jnp_dtype(d_v["dtype"]), packed=False, collective=bool(case["d_collective"])),
        plgpu.TMEM((m, k), jnp_dtype(a_v["dtype"]), **a_alloc) if case["in_tmem"] else None,
        plgpu.Barrier(num_arrivals=2),
        plgpu.Barrier(orders_tensor_core=True),
    ]
    if case["scaled"]:
        block = _scale_block(case)
        scratch += [plgpu.TMEM((rows, kb // block), jnp.float8_e8m0fnu,
                               layout=plgpu.TMEMLayout.SCALES_LAYOUT) for rows in (m, nb)]
    if case["sparse"]:
        scratch.append(plgpu.TMEM((m, k), jnp.uint2, layout=plgpu.TMEMLayout.SPARSE_METADATA_LAYOUT))
    if staged:
        scratch.append(plgpu.SMEM((m, n), jnp_dtype(d_v["dtype"])))
    cluster: dict[str, Any] = {"cluster": (2,), "cluster_names": ("x",)} if case["collective"] else {}
    return plgpu.kernel(
        body, out_type=out_struct(spec), scratch_types=scratch,
        compiler_params=plgpu.CompilerParams(lowering_semantics=semantics), **cluster,
    )
