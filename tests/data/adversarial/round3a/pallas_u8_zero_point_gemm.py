"""Asymmetric uint8 GEMM (both operands uint8, zero points handled outside).

out = (x - zx) @ (w - zw).T
    = x @ w.T - zw * rowsum(x) - zx * rowsum(w) + K * zx * zw
The kernel computes the raw x @ w.T in int32 with warp MMAs; the
zero-point correction is a cheap jnp epilogue.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 256, 128, 512
BM, BN, BK = 64, 64, 128
DTYPE = jnp.uint8


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), jnp.int32),
    grid=(M // BM, N // BN),
    grid_names=("m", "n"),
)
def _u8_matmul_kernel(x_gmem, w_gmem, o_gmem):
  m_win = pl.ds(lax.axis_index("m") * BM, BM)
  n_win = pl.ds(lax.axis_index("n") * BN, BN)
  acc = plgpu.layout_cast(
      jnp.zeros((BM, BN), jnp.int32), plgpu.Layout.MMA_ACC(DTYPE)
  )
  for kk in range(K // BK):
    k_win = pl.ds(kk * BK, BK)
    x = plgpu.load(
        x_gmem.at[m_win, k_win], layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False
    )
    w = plgpu.load(
        w_gmem.at[n_win, k_win].T,
        layout=plgpu.Layout.MMA_RHS(DTYPE),
        optimized=False,
    )
    acc = plgpu.mma(acc, x, w)
  o_gmem[m_win, n_win] = acc


def u8_gemm(x, w, zx, zw):
  raw = _u8_matmul_kernel(x, w)
  xs = x.astype(jnp.int32).sum(axis=1, keepdims=True)
  ws = w.astype(jnp.int32).sum(axis=1, keepdims=True).T
  return raw - zw * xs - zx * ws + K * zx * zw


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.integers(0, 256, (M, K)), DTYPE)
  w = jnp.asarray(rng.integers(0, 256, (N, K)), DTYPE)
  zx, zw = 128, 121
  ref = (x.astype(jnp.int32) - zx) @ (w.astype(jnp.int32) - zw).T
  np.testing.assert_array_equal(u8_gemm(x, w, zx, zw), ref)
