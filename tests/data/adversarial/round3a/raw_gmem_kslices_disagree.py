"""Block-tiled bf16 GEMM reading operand sub-tiles directly from GMEM.

x: (M, K), w: (N, K) (row-major weights), out: (M, N) f32 = x @ w.T.
grid = (N // BLOCK_N, M // BLOCK_M); each CTA walks K in BLOCK_K steps.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax._src.lib.mlir.dialects import gpu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 256, 256, 512
BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
DTYPE = jnp.bfloat16


def kernel(ctx, x, w, out, _smem):
  index = ir.IndexType.get()
  m0 = arith.muli(gpu.block_id(gpu.Dimension.y), utils.c(BLOCK_M, index))
  n0 = arith.muli(gpu.block_id(gpu.Dimension.x), utils.c(BLOCK_N, index))
  rows = utils.ds(m0, BLOCK_M)
  cols = utils.ds(n0, BLOCK_N)

  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  acc = mgpu.FragmentedArray.splat(
      arith.constant(ir.F32Type.get(), 0.0), (BLOCK_M, BLOCK_N), layout=layouts.acc
  )

  for kk in range(K // BLOCK_K):
    k0 = kk * BLOCK_K
    x_blk = utils.memref_slice(x, (rows, utils.ds(k0, BLOCK_K)))
    w_blk = utils.memref_slice(w, (cols, utils.ds(k0, BLOCK_N)))
    lhs = mgpu.FragmentedArray.load_untiled(
        x_blk, layout=layouts.lhs, optimized=False
    )
    rhs = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(w_blk, (1, 0)), layout=layouts.rhs, optimized=False
    )
    acc = mgpu.mma(acc, lhs, rhs)

  acc.store_untiled(utils.memref_slice(out, (rows, cols)), optimized=False)


def build():
  return mgpu.as_gpu_kernel(
      kernel,
      (N // BLOCK_N, M // BLOCK_M, 1),
      (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), DTYPE), jax.ShapeDtypeStruct((N, K), DTYPE)),
      jax.ShapeDtypeStruct((M, N), jnp.float32),
      (),
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = rng.uniform(-1, 1, (M, K)).astype(DTYPE)
  w = rng.uniform(-1, 1, (N, K)).astype(DTYPE)
  np.testing.assert_allclose(
      build()(x, w), x.astype(np.float32) @ w.astype(np.float32).T, atol=1e-2
  )
