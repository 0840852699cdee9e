"""Tiled int8 GEMM with bias: out = bias + x @ w.T, int32.

Each CTA owns a (BLOCK_M, BLOCK_N) output tile. Operands are read straight
from GMEM sub-views (memref_slice with dynamic block offsets); the epilogue
goes through a single SMEM staging buffer and is written back with TMA.
One warp per 16 rows (m_warps=1): a narrow-M tile, four warps along N.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax._src.lib.mlir.dialects import gpu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 256, 512
BLOCK_M, BLOCK_N, BLOCK_K = 32, 64, 64
M_WARPS = 1
IN_DTYPE = jnp.int8
OUT_DTYPE = jnp.int32


def _block_offset(dim, size):
  index = ir.IndexType.get()
  return arith.muli(gpu.block_id(dim), utils.c(size, index))


def _as_k_by_n(rows_n_cols_k):
  # Weights are (N, K) row-major; the rhs layout wants K contiguous, which the
  # (K, N) *view* of the same memory gives us for free.
  return utils.memref_transpose(rows_n_cols_k, (1, 0))


def kernel(ctx, x, w, bias, out, out_smem):
  m0 = _block_offset(gpu.Dimension.y, BLOCK_M)
  n0 = _block_offset(gpu.Dimension.x, BLOCK_N)
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(IN_DTYPE), m_warps=M_WARPS)
  operand_signed = utils.is_signed(IN_DTYPE)

  bias_tile = utils.memref_slice(
      bias, (utils.ds(m0, BLOCK_M), utils.ds(n0, BLOCK_N))
  )
  acc = mgpu.FragmentedArray.load_untiled(
      bias_tile,
      layout=layouts.acc,
      is_signed=utils.is_signed(OUT_DTYPE),
      optimized=False,
  )

  for kk in range(K // BLOCK_K):
    k_window = utils.ds(kk * BLOCK_K, BLOCK_K)
    x_tile = utils.memref_slice(x, (utils.ds(m0, BLOCK_M), k_window))
    w_tile = utils.memref_slice(w, (utils.ds(n0, BLOCK_N), k_window))
    lhs = mgpu.FragmentedArray.load_untiled(
        x_tile, layout=layouts.lhs, is_signed=operand_signed, optimized=False
    )
    rhs = mgpu.FragmentedArray.load_untiled(
        _as_k_by_n(w_tile),
        layout=layouts.rhs,
        is_signed=operand_signed,
        optimized=False,
    )
    acc = mgpu.mma(acc, lhs, rhs)

  acc.store_untiled(out_smem, optimized=False)
  utils.commit_shared()
  ctx.async_copy(
      src_ref=out_smem,
      dst_ref=out,
      gmem_slice=(utils.ds(m0, BLOCK_M), utils.ds(n0, BLOCK_N)),
  )
  ctx.await_async_copy(0)


def build():
  in_shapes = (
      jax.ShapeDtypeStruct((M, K), IN_DTYPE),
      jax.ShapeDtypeStruct((N, K), IN_DTYPE),
      jax.ShapeDtypeStruct((M, N), OUT_DTYPE),
  )
  out_shape = jax.ShapeDtypeStruct((M, N), OUT_DTYPE)
  smem = jax.ShapeDtypeStruct((BLOCK_M, BLOCK_N), OUT_DTYPE)
  grid = (N // BLOCK_N, M // BLOCK_M, 1)
  return mgpu.as_gpu_kernel(kernel, grid, (128, 1, 1), in_shapes, out_shape, smem)


if __name__ == "__main__":
  rng = np.random.default_rng(1)
  x = rng.integers(-128, 128, (M, K)).astype(IN_DTYPE)
  w = rng.integers(-128, 128, (N, K)).astype(IN_DTYPE)
  bias = rng.integers(-1000, 1000, (M, N)).astype(OUT_DTYPE)
  out = build()(x, w, bias)
  ref = bias + x.astype(np.int32) @ w.astype(np.int32).T
  np.testing.assert_array_equal(out, ref)
