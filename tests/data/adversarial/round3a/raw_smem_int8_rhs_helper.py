"""int8 x int8 -> int32 warp MMA, operands staged into SMEM with TMA.

Small helper functions wrap the "SMEM tile -> MMA fragment" step so that the
same code can be reused by the f16 and int8 kernels.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 64, 128
DTYPE = jnp.int8
SWIZZLE = 16
TILING = (8, SWIZZLE // jnp.dtype(DTYPE).itemsize)


def load_lhs(smem_ref, layouts, dtype):
  return mgpu.FragmentedArray.load_tiled(
      smem_ref, swizzle=SWIZZLE, layout=layouts.lhs,
      is_signed=utils.is_signed(dtype),
  )


def load_rhs(smem_ref_nk, layouts):
  """Takes the (N, K) tiled SMEM buffer, returns a (K, N) rhs fragment."""
  kn_view = utils.memref_transpose(smem_ref_nk, (1, 0, 3, 2))
  return mgpu.FragmentedArray.load_tiled(
      kn_view, swizzle=SWIZZLE, layout=layouts.rhs
  )


def kernel(ctx, a, b, out, scratch):
  a_smem, b_smem, bars = scratch
  ctx.async_copy(
      src_ref=a, dst_ref=a_smem, swizzle=SWIZZLE,
      gmem_transform=mgpu.TileTransform(TILING), barrier=bars[0],
  )
  ctx.async_copy(
      src_ref=b, dst_ref=b_smem, swizzle=SWIZZLE,
      gmem_transform=mgpu.TileTransform(TILING), barrier=bars[1],
  )
  bars[0].wait()
  bars[1].wait()

  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  i32 = ir.IntegerType.get_signless(32)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(i32, 0), (M, N), layout=layouts.acc, is_signed=True
  )
  lhs = load_lhs(a_smem, layouts, DTYPE)
  rhs = load_rhs(b_smem, layouts)
  acc = mgpu.mma(acc, lhs, rhs)
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
      jax.ShapeDtypeStruct((M, N), jnp.int32),
      smem,
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (M, K)).astype(DTYPE)
  b = rng.integers(-128, 128, (N, K)).astype(DTYPE)
  np.testing.assert_array_equal(
      build()(a, b), a.astype(np.int32) @ b.astype(np.int32).T
  )
