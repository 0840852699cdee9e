"""Warp-level MMA matmul: all K slices of A and B are prefetched into SMEM with
TMA (one buffer per K step), then consumed in order.

A is (M, K) bf16, B is stored (N, K) bf16 (the usual "weights" layout), the
output is (M, N) f32 = A @ B.T.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import ds

M, N, K = 128, 64, 256
BLOCK_K = 64
K_STEPS = K // BLOCK_K
DTYPE = jnp.bfloat16
SWIZZLE = 16  # no swizzle: each TMA tile row is exactly one 16B chunk
_BYTES = jnp.dtype(DTYPE).itemsize
TILING = (8, SWIZZLE // _BYTES)


def _k_major(tiled_ref):
  """(n/8, k/8, 8, 8) tiled SMEM view -> (k/8, n/8, 8, 8), i.e. logical (k, n)."""
  return utils.memref_transpose(tiled_ref, (1, 0, 3, 2))


def kernel(ctx, a, b, out, smem):
  a_smem, b_smem, barriers = smem

  for step in range(K_STEPS):
    k0 = step * BLOCK_K
    ctx.async_copy(
        src_ref=a,
        dst_ref=utils.memref_slice(a_smem, step),
        gmem_slice=(ds(0, M), ds(k0, BLOCK_K)),
        gmem_transform=mgpu.TileTransform(TILING),
        swizzle=SWIZZLE,
        barrier=barriers[2 * step],
    )
    ctx.async_copy(
        src_ref=b,
        dst_ref=utils.memref_slice(b_smem, step),
        gmem_slice=(ds(0, N), ds(k0, BLOCK_K)),
        gmem_transform=mgpu.TileTransform(TILING),
        swizzle=SWIZZLE,
        barrier=barriers[2 * step + 1],
    )

  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  zero = arith.constant(ir.F32Type.get(), 0.0)
  acc = mgpu.FragmentedArray.splat(zero, (M, N), layout=layouts.acc)

  for step in range(K_STEPS):
    barriers[2 * step].wait()
    barriers[2 * step + 1].wait()
    a_tile = mgpu.FragmentedArray.load_tiled(
        utils.memref_slice(a_smem, step), swizzle=SWIZZLE, layout=layouts.lhs
    )
    b_tile = mgpu.FragmentedArray.load_tiled(
        _k_major(utils.memref_slice(b_smem, step)),
        swizzle=SWIZZLE,
        layout=layouts.rhs,
    )
    acc = mgpu.mma(acc, a_tile, b_tile)

  acc.store_untiled(out, optimized=False)


def build():
  a_shape = jax.ShapeDtypeStruct((M, K), DTYPE)
  b_shape = jax.ShapeDtypeStruct((N, K), DTYPE)
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  smem = (
      jax.ShapeDtypeStruct(
          (K_STEPS, *mgpu.tile_shape((M, BLOCK_K), TILING)), DTYPE
      ),
      jax.ShapeDtypeStruct(
          (K_STEPS, *mgpu.tile_shape((N, BLOCK_K), TILING)), DTYPE
      ),
      mgpu.TMABarrier(2 * K_STEPS),
  )
  return mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1), (a_shape, b_shape), out_shape, smem
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = rng.uniform(-1, 1, (M, K)).astype(DTYPE)
  b = rng.uniform(-1, 1, (N, K)).astype(DTYPE)
  out = build()(a, b)
  ref = a.astype(np.float32) @ b.astype(np.float32).T
  np.testing.assert_allclose(out, ref, atol=1e-3, rtol=1e-3)
