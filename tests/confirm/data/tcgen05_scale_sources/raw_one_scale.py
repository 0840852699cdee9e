"""MMA704, raw: an MXFP8 kernel that passes `a_scale=` and forgets `b_scale=`.

`tcgen05.mma()` takes both scales or none: it raises `Either none or both scales should be
provided`."""

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 256
SWIZZLE = 128
TILING = (8, SWIZZLE)  # 8-bit elements: 128 per 128-byte row
BLOCK = 32


def scale_tiles(rows):
  return (rows // 128, K // BLOCK // 4, 32, 16)


def kernel(ctx, lhs, rhs, lhs_scales_gmem, rhs_scales_gmem, out, scratch):
  (lhs_smem, rhs_smem, lhs_scales_smem, rhs_scales_smem, barriers, mma_barrier,
   acc, lhs_scales, rhs_scales) = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(src_ref=src, dst_ref=dst, swizzle=SWIZZLE,
                   gmem_transform=mgpu.TileTransform(TILING), barrier=barrier)
  ctx.async_copy(src_ref=lhs_scales_gmem, dst_ref=lhs_scales_smem, barrier=barriers[2])
  ctx.async_copy(src_ref=rhs_scales_gmem, dst_ref=rhs_scales_smem, barrier=barriers[3])
  for i in range(4):
    barriers[i].wait()
  with mgpu.single_thread():
    tcgen05.async_copy_scales_smem_to_tmem(lhs_scales_smem, lhs_scales)
    tcgen05.async_copy_scales_smem_to_tmem(rhs_scales_smem, rhs_scales)
    tcgen05.mma(
        acc,
        lhs_smem,
        mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        a_scale=lhs_scales,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build():
  x = jax.ShapeDtypeStruct((M, K), jnp.float8_e4m3fn)
  y = jax.ShapeDtypeStruct((N, K), jnp.float8_e4m3fn)
  xs = jax.ShapeDtypeStruct(scale_tiles(M), jnp.float8_e8m0fnu)
  ys = jax.ShapeDtypeStruct(scale_tiles(N), jnp.float8_e8m0fnu)
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    scratch = [
        jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.float8_e4m3fn),
        jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.float8_e4m3fn),
        jax.ShapeDtypeStruct(scale_tiles(M), jnp.float8_e8m0fnu),
        jax.ShapeDtypeStruct(scale_tiles(N), jnp.float8_e8m0fnu),
        mgpu.Barrier(1, num_barriers=4),
        mgpu.Barrier(1),
        mgpu.TMEM((M, N), jnp.float32),
        mgpu.TMEM((M, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
        mgpu.TMEM((N, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
    ]
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y, xs, ys), out_shape,
                              scratch)
