"""An int8 x int8 Blackwell GEMM in raw Mosaic GPU, accumulating in int32."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05

M, N, K = 128, 128, 128
SWIZZLE = 128
TILING = (8, SWIZZLE)  # 8-bit elements: 128 bytes per row
ACC_DTYPE = jnp.int32


def kernel(ctx, lhs, rhs, out, scratch):
  lhs_smem, rhs_smem, barriers, mma_barrier, acc = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(
        src_ref=src,
        dst_ref=dst,
        swizzle=SWIZZLE,
        gmem_transform=mgpu.TileTransform(TILING),
        barrier=barrier,
    )
    barrier.wait()
  with mgpu.single_thread():
    tcgen05.mma(acc, lhs_smem, rhs_smem, a_swizzle=SWIZZLE, b_swizzle=SWIZZLE, accumulate=False)
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load(is_signed=True).store_untiled(out, optimized=False)


def run(x, y):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), x.dtype),
      jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), TILING), y.dtype),
      mgpu.Barrier(1, num_barriers=2),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), ACC_DTYPE),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), ACC_DTYPE)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch)(x, y)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.integers(-128, 128, (M, K)), jnp.int8)
y = jnp.asarray(rng.integers(-128, 128, (K, N)), jnp.int8)
run(x, y)
