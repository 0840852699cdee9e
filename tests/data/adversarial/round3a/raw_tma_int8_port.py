"""int8 version of the TMA-staged warp-MMA matmul.

Ported from the f16 kernel: same TMA staging (one SMEM buffer per K step,
16-byte rows, no swizzle), block config shared with the f16 variant.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import ds

# Shared with the f16 kernel.
CONFIG = dict(block_m=128, block_n=64, block_k=16, acc_dtype=jnp.float32)

DTYPE = jnp.int8
M, N, K = CONFIG["block_m"], CONFIG["block_n"], 128
BLOCK_K = CONFIG["block_k"]
ACC_DTYPE = CONFIG["acc_dtype"]
K_STEPS = K // BLOCK_K
SWIZZLE = 16
TILING = (8, SWIZZLE // jnp.dtype(DTYPE).itemsize)  # (8, 16) for int8


def kernel(ctx, a, b, out, smem):
  a_smem, b_smem, barriers = smem
  for step in range(K_STEPS):
    ctx.async_copy(
        src_ref=a,
        dst_ref=utils.memref_slice(a_smem, step),
        gmem_slice=(ds(0, M), ds(step * BLOCK_K, BLOCK_K)),
        gmem_transform=mgpu.TileTransform(TILING),
        swizzle=SWIZZLE,
        barrier=barriers[2 * step],
    )
    ctx.async_copy(
        src_ref=b,
        dst_ref=utils.memref_slice(b_smem, step),
        gmem_slice=(ds(0, N), ds(step * BLOCK_K, BLOCK_K)),
        gmem_transform=mgpu.TileTransform(TILING),
        swizzle=SWIZZLE,
        barrier=barriers[2 * step + 1],
    )

  elt = utils.dtype_to_ir_type(DTYPE)
  layouts = mgpu.MMALayouts(elt)
  acc_elt = utils.dtype_to_ir_type(ACC_DTYPE)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(acc_elt, 0.0),
      (M, N),
      layout=layouts.acc,
      is_signed=utils.is_signed(ACC_DTYPE),
  )
  for step in range(K_STEPS):
    barriers[2 * step].wait()
    barriers[2 * step + 1].wait()
    lhs = mgpu.FragmentedArray.load_tiled(
        utils.memref_slice(a_smem, step),
        swizzle=SWIZZLE,
        layout=layouts.lhs,
        is_signed=True,
    )
    rhs = mgpu.FragmentedArray.load_tiled(
        utils.memref_transpose(utils.memref_slice(b_smem, step), (1, 0, 3, 2)),
        swizzle=SWIZZLE,
        layout=layouts.rhs,
        is_signed=True,
    )
    acc = mgpu.mma(acc, lhs, rhs)
  acc.store_untiled(out, optimized=False)


def build():
  smem = (
      jax.ShapeDtypeStruct((K_STEPS, *mgpu.tile_shape((M, BLOCK_K), TILING)), DTYPE),
      jax.ShapeDtypeStruct((K_STEPS, *mgpu.tile_shape((N, BLOCK_K), TILING)), DTYPE),
      mgpu.TMABarrier(2 * K_STEPS),
  )
  return mgpu.as_gpu_kernel(
      kernel,
      (1, 1, 1),
      (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), DTYPE), jax.ShapeDtypeStruct((N, K), DTYPE)),
      jax.ShapeDtypeStruct((M, N), ACC_DTYPE),
      smem,
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (M, K)).astype(DTYPE)
  b = rng.integers(-128, 128, (N, K)).astype(DTYPE)
  out = build()(a, b)
  np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32).T)
