"""Synthesized jax kernels around one warpgroup MMA call (imported only inside worker
processes, through `families.worker_module("wgmma", "kernels")`).

`mgpu.wgmma` is built the way jax's own `_test_wgmma_basic` builds it (`as_gpu_kernel` on one
warpgroup, A and B copied to SMEM by TMA with the call's swizzle and tiled `(8, swizzle /
itemsize)`, B stored as (n, k) and read K-major through `memref_transpose`, the accumulator
`WGMMAAccumulator.zero(m, n, dtype, is_signed=...)`); A in registers is loaded with
`WGMMA_LAYOUT` (`WGMMA_LAYOUT_8BIT` for 8-bit). `plgpu.wgmma` is built the way Pallas's
`test_wgmma` does (`plgpu.kernel`, SMEM scratch with `TilingTransform`/`SwizzleTransform`,
`plgpu.transpose_ref(b, (1, 0))`, `pl.run_scoped(..., plgpu.ACC((m, n), dtype))`). Each value
gets the dtype, signedness and shape of the signature; nothing of the checked program runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import jax

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
from mmalint.confirm.families.wgmma import MGPU_API, PALLAS_API

Spec = dict[str, Any]

__all__ = ["as_device_array", "build", "build_context", "device_problem", "import_apis",
           "instructions_in", "loaded_positions", "lowered_text", "missing_api", "probe_api",
           "uses_pallas"]

# The instruction as it appears in the lowered IR (an llvm.inline_asm string).
INSTRUCTION = re.compile(r"wgmma\.mma_async\.sync\.aligned\.m\d+n\d+k\d+(?:\.[a-z0-9]+)+")


def uses_pallas(api: str) -> bool:
    return api == PALLAS_API


def import_apis(*, pallas: bool) -> None:
    _module("jax.experimental.mosaic.gpu")
    if pallas:
        _module("jax.experimental.pallas.mosaic_gpu")


def missing_api(api: str) -> str | None:
    """Every jax this lowering supports (0.10-0.12) has both wgmma APIs."""
    del api
    return None


def device_problem(compute_capability: str | None) -> str | None:
    """Why a GPU of this compute capability cannot run the family's kernels, or None."""
    if compute_capability is None or str(compute_capability) == "9.0":
        return None
    return (f"wgmma needs a Hopper (sm_90a) GPU; this GPU is sm {compute_capability}")


def instructions_in(text: str) -> list[str]:
    return sorted(set(INSTRUCTION.findall(text)))


@contextlib.contextmanager
def target_arch(arch: Sequence[int]) -> Iterator[None]:
    """Lower for `arch` on a machine without a GPU: Mosaic asks the default device for its
    compute capability and assumes (9, 0) without one; this makes that answer `arch` (on a
    real GPU the device's own answer stands)."""
    patched = []
    for name in ("jax.experimental.mosaic.gpu.core", "jax.experimental.mosaic.gpu.utils"):
        module = _module(name)
        original = getattr(module, "_infer_arch", None)
        if original is None:
            continue

        def infer(original: Callable[[], tuple[int, int]] = original) -> tuple[int, int]:
            if jax.devices()[0].platform == "cpu":
                return (int(arch[0]), int(arch[1]))
            return original()

        patched.append((module, original))
        module._infer_arch = infer
    try:
        yield
    finally:
        for module, original in patched:
            module._infer_arch = original


@contextlib.contextmanager
def _both(*managers: AbstractContextManager[None]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for manager in managers:
            stack.enter_context(manager)
        yield


def build_context(spec: Spec) -> AbstractContextManager[None]:
    arch = target_arch(spec["arch"])
    if spec["api"] == MGPU_API:
        return _both(arch, mlir_context())
    return arch














def build_mgpu(spec: Spec, in_shapes: Sequence[Any]) -> Callable[..., Any]:
    """`as_gpu_kernel` around `mgpu.wgmma(acc, a, b, swizzle=...)`; building it runs the body,
    so every check of `wgmma` and `WGMMAAccumulator` raises here (inside `mlir_context`)."""
    mgpu = _module("jax.experimental.mosaic.gpu")
    utils = _module("jax.experimental.mosaic.gpu.utils")
    fa = _module("jax.experimental.mosaic.gpu.fragmented_array")
    nvvm = _module("jax._src.lib.mlir.dialects.nvvm")

    acc_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    m, n = acc_v["shape"]
    swizzle = int(spec["swizzle"])
    a_in_registers = a_v["memory_space"] == "registers"
    a_tiles, b_tiles = tiling(a_v["dtype"], swizzle), tiling(b_v["dtype"], swizzle)

    def body(ctx: Any, a_gmem: Any, b_gmem: Any, out: Any, scratch: Any) -> None:
        a_smem, b_smem, barriers = scratch
        if not a_in_registers:
            ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=swizzle,
                           gmem_transform=mgpu.TileTransform(a_tiles), barrier=barriers[0])
        ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=swizzle,
                       gmem_transform=mgpu.TileTransform(b_tiles), barrier=barriers[1])
        if not a_in_registers:
            barriers[0].wait()
        barriers[1].wait()
        acc_type = utils.dtype_to_ir_type(jnp_dtype(acc_v["dtype"]))
        acc = mgpu.WGMMAAccumulator.zero(m, n, acc_type, is_signed=acc_v["is_signed"])
        if a_in_registers:
            layout = fa.WGMMA_LAYOUT_8BIT if itemsize(a_v["dtype"]) == 1 else fa.WGMMA_LAYOUT
            layout = getattr(fa, spec.get("a_layout") or "", layout)
            a = mgpu.FragmentedArray.load_untiled(a_gmem, layout=layout,
                                                  is_signed=a_v["is_signed"], optimized=False)
        else:
            # A (k, m) in memory (MMA607) is passed as the transposed view of its tiles.
            a = utils.memref_transpose(a_smem, (1, 0, 3, 2)) if a_v.get("transposed") else a_smem
        # B is (n, k) in memory: its tiles are read K-major (as 8-bit wgmma requires); a B
        # stored (k, n) (MMA607's flagged call) is passed as it is, N-major.
        b = utils.memref_transpose(b_smem, (1, 0, 3, 2)) if b_v.get("transposed") else b_smem
        acc = mgpu.wgmma(acc, a, b, swizzle=swizzle)
        nvvm.wgmma_commit_group_sync_aligned()
        nvvm.wgmma_wait_group_sync_aligned(0)
        acc.value.store_untiled(out, optimized=False)

    barrier = (mgpu.TMABarrier(2) if hasattr(mgpu, "TMABarrier")
               else mgpu.Barrier(arrival_count=1, num_barriers=2))
    # A in registers is loaded from GMEM: its scratch is unused, and need not fit the tiling.
    a_scratch = (memory_shape(a_v) if spec.get("a_untiled")
                 else tile_shape(memory_shape(a_v), a_tiles))
    scratch = (
        jax.ShapeDtypeStruct(a_scratch, jnp_dtype(a_v["dtype"])),
        jax.ShapeDtypeStruct(tile_shape(memory_shape(b_v), b_tiles), jnp_dtype(b_v["dtype"])),
        barrier,
    )
    return mgpu.as_gpu_kernel(body, (1, 1, 1), (128, 1, 1), tuple(in_shapes), out_struct(spec),
                              scratch)


def build_pallas(spec: Spec) -> Callable[..., Any]:
    """`plgpu.kernel` around `plgpu.wgmma(acc_ref, a, b)` with the signature's semantics; the
    front end runs when it is traced, the accumulator allocation and `wgmma` when lowered."""
    pl = _module("jax.experimental.pallas")
    plgpu = _module("jax.experimental.pallas.mosaic_gpu")

    acc_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    m, n = acc_v["shape"]
    swizzle = int(spec["swizzle"])
    semantics = (plgpu.LoweringSemantics.Warpgroup if spec["semantics"] == "warpgroup"
                 else plgpu.LoweringSemantics.Lane)
    a_in_registers = a_v["memory_space"] == "registers"

    a_swizzle = int(spec.get("a_swizzle") or swizzle)
    b_swizzle = int(spec.get("b_swizzle") or swizzle)

    def transforms(dtype: str, swizzle: int = swizzle) -> tuple[Any, ...]:
        return (plgpu.TilingTransform(tiling(dtype, swizzle)), plgpu.SwizzleTransform(swizzle))

    def body(a_gmem: Any, b_gmem: Any, o_gmem: Any, a_smem: Any, b_smem: Any, o_smem: Any,
             barrier: Any) -> None:
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)

        def scope(acc_ref: Any) -> Any:
            if a_in_registers:
                layout = (plgpu.Layout.WGMMA_8BIT if itemsize(a_v["dtype"]) == 1
                          else plgpu.Layout.WGMMA)
                a = plgpu.load(a_smem, (), layout=layout, optimized=False) if _load_takes_index(
                    plgpu) else plgpu.load(a_smem, layout=layout, optimized=False)
            elif a_v.get("transposed"):
                a = plgpu.transpose_ref(a_smem, (1, 0))
            else:
                a = a_smem
            b = plgpu.transpose_ref(b_smem, (1, 0)) if b_v.get("transposed") else b_smem
            plgpu.wgmma(acc_ref, a, b)
            return acc_ref[...]

        o_smem[...] = pl.run_scoped(scope, plgpu.ACC((m, n), jnp_dtype(acc_v["dtype"])))
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(o_smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

    # The result goes out through swizzled SMEM where its N allows (an unswizzled store of a
    # WGMMA-layout array has no bank-conflict-free plan in jax 0.12's Lane lowering).
    out_tiling = tiling(acc_v["dtype"], swizzle)
    out_transforms = transforms(acc_v["dtype"]) if n % out_tiling[1] == 0 else ()
    return plgpu.kernel(
        body, out_type=out_struct(spec),
        scratch_types=[
            plgpu.SMEM(tuple(memory_shape(a_v)), jnp_dtype(a_v["dtype"]),
                       transforms=() if spec.get("a_untiled") else transforms(a_v["dtype"], a_swizzle)),
            plgpu.SMEM(tuple(memory_shape(b_v)), jnp_dtype(b_v["dtype"]),
                       transforms=transforms(b_v["dtype"], b_swizzle)),
            plgpu.SMEM((m, n), jnp_dtype(acc_v["dtype"]), transforms=out_transforms),
            plgpu.Barrier(num_arrivals=2),
        ],
        compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
    )


def _load_takes_index(plgpu: Any) -> bool:
    """jax 0.10's `plgpu.load(src, idx, ...)` needs the index."""
    import inspect

    params = inspect.signature(plgpu.load).parameters
    return "idx" in params and params["idx"].default is inspect.Parameter.empty


def build(spec: Spec) -> tuple[Callable[..., Any], list[jax.ShapeDtypeStruct]]:
    structs = input_structs(spec)
    if spec["api"] == PALLAS_API:
        return build_pallas(spec), structs
    return build_mgpu(spec, structs), structs
