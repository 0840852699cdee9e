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
import numpy as np

from mmalint.confirm.families.mma.kernels import (
    _module,
    loaded_positions,
    lowered_text,
    memory_shape,
    mlir_context,
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


def _jnp(dtype: str) -> Any:
    return jnp.dtype(dtype)


def _itemsize(dtype: str) -> int:
    return int(jnp.dtype(dtype).itemsize)


def input_structs(spec: Spec) -> list[jax.ShapeDtypeStruct]:
    return [jax.ShapeDtypeStruct(memory_shape(spec["values"][i]), _jnp(spec["values"][i]["dtype"]))
            for i in loaded_positions(spec)]


def out_struct(spec: Spec) -> jax.ShapeDtypeStruct:
    d = spec["values"][spec["intended"][0]]
    return jax.ShapeDtypeStruct(tuple(d["shape"]), _jnp(d["dtype"]))


def _tiling(dtype: str, swizzle: int) -> tuple[int, int]:
    return (8, swizzle // _itemsize(dtype))


def _tile_shape(shape: Sequence[int], tiling: tuple[int, int]) -> tuple[int, ...]:
    return (shape[0] // tiling[0], shape[1] // tiling[1], *tiling)


def _scale_shape(rows: int, k: int) -> tuple[int, int]:
    # One e8m0 scale per 32 elements of K (MXFP8), as the block-scaled tests use.
    return (rows, max(k // 32, 1))


def build_mgpu(spec: Spec, in_shapes: Sequence[Any]) -> Callable[..., Any]:
    """`as_gpu_kernel` around `tcgen05.mma(d, a, b, ...)`; building it runs every check of
    `mma()` and of `_do_mma` (inside `mlir_context`)."""
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
    a_tiling, b_tiling = _tiling(a_v["dtype"], a_copy), _tiling(b_v["dtype"], b_copy)
    collective = bool(spec["options"].get("collective"))

    def body(ctx: Any, a_gmem: Any, b_gmem: Any, out: Any, scratch: Any) -> None:
        a_smem, b_smem, barriers, mma_barrier, d_tmem = scratch
        ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=a_copy,
                       gmem_transform=mgpu.TileTransform(a_tiling), barrier=barriers[0])
        ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=b_copy,
                       gmem_transform=mgpu.TileTransform(b_tiling), barrier=barriers[1])
        barriers[0].wait()
        barriers[1].wait()
        # B is (n, k) in memory and read K-major, unless the call reads a (k, n) B N-major;
        # A is (m, k), unless the call reads a (k, m) A M-major (the K group cases).
        a_ref = utils.memref_transpose(a_smem, (1, 0, 3, 2)) if a_v.get("transposed") else a_smem
        b_ref = (utils.memref_transpose(b_smem, (1, 0, 3, 2)) if b_v.get("transposed", True)
                 else b_smem)
        with mgpu.single_thread():
            tcgen05.mma(d_tmem, a_ref, b_ref,
                        a_swizzle=a_swizzle, b_swizzle=b_swizzle, accumulate=False,
                        **({"collective": True} if collective else {}))
            tcgen05.commit_arrive(mma_barrier)
        mma_barrier.wait(orders_tensor_core=True)
        d_tmem.load(is_signed=d_v["is_signed"]).store_untiled(out, optimized=False)

    barrier = (mgpu.TMABarrier(2) if hasattr(mgpu, "TMABarrier")
               else mgpu.Barrier(arrival_count=1, num_barriers=2))
    scratch = (
        jax.ShapeDtypeStruct(_tile_shape(memory_shape(a_v), a_tiling), _jnp(a_v["dtype"])),
        jax.ShapeDtypeStruct(_tile_shape(memory_shape(b_v), b_tiling), _jnp(b_v["dtype"])),
        barrier,
        mgpu.Barrier(arrival_count=1),
        mgpu.TMEM((m, n), _jnp(d_v["dtype"])),
    )
    return mgpu.as_gpu_kernel(body, (1, 1, 1), (128, 1, 1), tuple(in_shapes), out_struct(spec),
                              scratch)


def build_pallas(spec: Spec) -> Callable[..., Any]:
    """`plgpu.kernel` around `plgpu.tcgen05_mma(d, a, b, barrier, ...)`: the front end (shapes,
    scales) runs when it is traced, `tcgen05.mma()`'s checks when it is lowered."""
    plgpu = _module("jax.experimental.pallas.mosaic_gpu")

    d_v, a_v, b_v = (spec["values"][i] for i in spec["intended"])
    m, n = d_v["shape"]
    k = a_v["shape"][1]
    a_swizzle, b_swizzle = int(spec["a_swizzle"]), int(spec["b_swizzle"])
    options = spec["options"]
    semantics = (plgpu.LoweringSemantics.Warpgroup if spec["semantics"] == "warpgroup"
                 else plgpu.LoweringSemantics.Lane)
    scales = [side for side in ("a", "b") if options.get(f"{side}_scale")]

    def transforms(dtype: str, swizzle: int) -> tuple[Any, ...]:
        return (plgpu.TilingTransform(_tiling(dtype, swizzle)), plgpu.SwizzleTransform(swizzle))

    def body(a_gmem: Any, b_gmem: Any, o_gmem: Any, a_smem: Any, b_smem: Any, d_tmem: Any,
             tma_barrier: Any, mma_barrier: Any, *scale_tmem: Any) -> None:
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
        plgpu.barrier_wait(tma_barrier)
        kwargs = {f"{side}_scale": ref for side, ref in zip(scales, scale_tmem, strict=True)}
        a_ref = plgpu.transpose_ref(a_smem, (1, 0)) if a_v.get("transposed") else a_smem
        b_ref = plgpu.transpose_ref(b_smem, (1, 0)) if b_v.get("transposed", True) else b_smem
        plgpu.tcgen05_mma(d_tmem, a_ref, b_ref, mma_barrier, accumulate=False, **kwargs)
        plgpu.barrier_wait(mma_barrier)
        o_gmem[...] = plgpu.async_load_tmem(d_tmem)

    scale_types = [
        plgpu.TMEM(tuple(spec.get(f"{side}_scale_shape") or _scale_shape(m if side == "a" else n, k)),
                   jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT)
        for side in scales
    ]
    return plgpu.kernel(
        body, out_type=out_struct(spec),
        scratch_types=[
            plgpu.SMEM(tuple(memory_shape(a_v)), _jnp(a_v["dtype"]),
                       transforms=transforms(a_v["dtype"], a_swizzle)),
            plgpu.SMEM(tuple(memory_shape(b_v)), _jnp(b_v["dtype"]),
                       transforms=transforms(b_v["dtype"], b_swizzle)),
            plgpu.TMEM((m, n), _jnp(d_v["dtype"]), packed=False),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
            *scale_types,
        ],
        compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
    )


def build(spec: Spec) -> tuple[Callable[..., Any], list[jax.ShapeDtypeStruct]]:
    structs = input_structs(spec)
    if spec["api"] == PALLAS_API:
        return build_pallas(spec), structs
    return build_mgpu(spec, structs), structs


def as_device_array(values: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(values).astype(jnp.dtype(dtype))


def probe_api(probe: str) -> dict[str, Any]:
    raise KeyError(f"unknown API probe {probe!r}")


