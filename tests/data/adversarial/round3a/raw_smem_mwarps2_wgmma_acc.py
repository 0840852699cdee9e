"""f16 warp-MMA tile with a 2x2 warp grid (m_warps=2), TMA-staged operands.

The accumulator is initialised the same way as in our Hopper wgmma kernels so
the shared epilogue (store_untiled from the WGMMA register layout) can be
reused unchanged.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 64, 64, 64
M_WARPS = 2  # 2 warps along M, 2 along N
DTYPE = jnp.float16
SWIZZLE = 16
TILING = (8, SWIZZLE // jnp.dtype(DTYPE).itemsize)


def _zero_acc(shape):
  f32 = ir.F32Type.get()
  return mgpu.FragmentedArray.splat(
      arith.constant(f32, 0.0), shape, layout=mgpu.WGMMA_LAYOUT
  )


def kernel(ctx, a, b, out, smem):
  a_smem, b_smem, barrier = smem
  ctx.async_copy(
      src_ref=a, dst_ref=a_smem, swizzle=SWIZZLE,
      gmem_transform=mgpu.TileTransform(TILING), barrier=barrier[0],
  )
  ctx.async_copy(
      src_ref=b, dst_ref=b_smem, swizzle=SWIZZLE,
      gmem_transform=mgpu.TileTransform(TILING), barrier=barrier[1],
  )
  barrier[0].wait()
  barrier[1].wait()

  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE), m_warps=M_WARPS)
  lhs = mgpu.FragmentedArray.load_tiled(a_smem, swizzle=SWIZZLE, layout=layouts.lhs)
  rhs = mgpu.FragmentedArray.load_tiled(
      utils.memref_transpose(b_smem, (1, 0, 3, 2)),
      swizzle=SWIZZLE,
      layout=layouts.rhs,
  )
  acc = mgpu.mma(_zero_acc((M, N)), lhs, rhs)
  acc.store_untiled(out, optimized=False)


def build():
  smem = (
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), DTYPE),
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), DTYPE),
      mgpu.TMABarrier(2),
  )
  return mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), DTYPE), jax.ShapeDtypeStruct((N, K), DTYPE)),
      jax.ShapeDtypeStruct((M, N), jnp.float32),
      smem,
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = rng.uniform(-1, 1, (M, K)).astype(DTYPE)
  b = rng.uniform(-1, 1, (N, K)).astype(DTYPE)
  np.testing.assert_allclose(
      build()(a, b), a.astype(np.float32) @ b.astype(np.float32).T, atol=1e-3
  )
