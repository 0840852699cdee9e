"""An MXFP4 (block-scaled float4_e2m1fn) Blackwell GEMM in raw Mosaic GPU: one float8_e8m0fnu
scale per 32 elements of K for each operand, copied to TMEM and passed to the MMA."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05

M, N, K = 128, 128, 512
SWIZZLE = 128
TILING = (8, 2 * SWIZZLE)  # 4-bit elements: 256 per 128-byte row
BLOCK = 32  # MXFP4: one e8m0 scale per 32 elements of K


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 copies from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def kernel(ctx, lhs, rhs, lhs_scales_gmem, rhs_scales_gmem, out, scratch):
  (lhs_smem, rhs_smem, lhs_scales_smem, rhs_scales_smem, barriers, mma_barrier,
   acc, lhs_scales, rhs_scales) = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(
        src_ref=src,
        dst_ref=dst,
        swizzle=SWIZZLE,
        gmem_transform=mgpu.TileTransform(TILING),
        barrier=barrier,
    )
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
        b_scale=rhs_scales,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def run(x, y, x_scales, y_scales):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), x.dtype),
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), y.dtype),
      jax.ShapeDtypeStruct(scale_tiles(M), jnp.float8_e8m0fnu),
      jax.ShapeDtypeStruct(scale_tiles(N), jnp.float8_e8m0fnu),
      mgpu.Barrier(1, num_barriers=4),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), jnp.float32),
      mgpu.TMEM((M, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
      mgpu.TMEM((N, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  args = (x, y, x_scales, y_scales)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), args, out_shape, scratch)(*args)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.uniform(-6, 6, (M, K)), jnp.float4_e2m1fn)
y = jnp.asarray(rng.uniform(-6, 6, (N, K)), jnp.float4_e2m1fn)  # weights stored (N, K)
x_scales = jnp.ones(scale_tiles(M), jnp.float8_e8m0fnu)
y_scales = jnp.ones(scale_tiles(N), jnp.float8_e8m0fnu)
run(x, y, x_scales, y_scales)
