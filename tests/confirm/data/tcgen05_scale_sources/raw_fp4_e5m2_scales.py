"""MMA710, raw: float4_e2m1fn operands with float8_e5m2 block scales.

FP4 takes e8m0 (MXFP4) or e4m3 (NVFP4) scales: jax 0.11+ raises `Scale element type
mismatch: expected f8e8m0fnu or f8e4m3fn, got f8E5M2`, jax 0.10 `A scale dtype mismatch:
expected f8e8m0fnu or f8e4m3fn, got f8E5M2`. (The scales are written to TMEM by a producer
warpgroup, left out here.)"""

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 512
SWIZZLE = 128
TILING = (8, 2 * SWIZZLE)  # 4-bit elements: 256 per 128-byte row
BLOCK = 32


def kernel(ctx, lhs, rhs, out, scratch):
  lhs_smem, rhs_smem, barriers, mma_barrier, acc, lhs_scales, rhs_scales = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(src_ref=src, dst_ref=dst, swizzle=SWIZZLE,
                   gmem_transform=mgpu.TileTransform(TILING), barrier=barrier)
    barrier.wait()
  with mgpu.single_thread():
    tcgen05.mma(
        acc,
        lhs_smem,
        mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        a_scale=lhs_scales,
        b_scale=rhs_scales,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build():
  x = jax.ShapeDtypeStruct((M, K), jnp.float4_e2m1fn)
  y = jax.ShapeDtypeStruct((N, K), jnp.float4_e2m1fn)
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    scratch = [
        jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.float4_e2m1fn),
        jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.float4_e2m1fn),
        mgpu.Barrier(1, num_barriers=2),
        mgpu.Barrier(1),
        mgpu.TMEM((M, N), jnp.float32),
        mgpu.TMEM((M, K // BLOCK), jnp.float8_e5m2, layout=tcgen05.scales_layout()),
        mgpu.TMEM((N, K // BLOCK), jnp.float8_e5m2, layout=tcgen05.scales_layout()),
    ]
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch)
