"""Per-tensor scaled FP8 (E4M3) matmul for inference.

Both operands are cast to E4M3 with a per-tensor scale chosen so that the
tensor's absolute maximum lands on ``finfo(e4m3).max``. The product runs on
the warp-level MMA units (sm_89+) and is rescaled in the epilogue.
"""

from __future__ import annotations

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

FP8 = jnp.dtype(jnp.float8_e4m3fn)


def _per_tensor_scale(x: jax.Array) -> jax.Array:
  amax = jnp.max(jnp.abs(x)).astype(jnp.float32)
  return jnp.maximum(amax, 1e-12) / jnp.finfo(FP8).max.astype(jnp.float32)


def _to_fp8(x: jax.Array, scale: jax.Array) -> jax.Array:
  fmax = float(jnp.finfo(FP8).max)
  return jnp.clip(x.astype(jnp.float32) / scale, -fmax, fmax).astype(FP8)


def _make_fp8_gemm(m, n, k, *, acc_dtype, block_m=128, block_n=128,
                   block_k=128):
  tile = (block_m, block_n)

  def kernel(a_ref, b_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * block_m, block_m)
    ns = pl.ds(lax.axis_index("n") * block_n, block_n)

    def step(ki, acc):
      ks = pl.ds(ki * block_k, block_k)
      a = plgpu.load(a_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(FP8),
                     optimized=False)
      b = plgpu.load(b_ref.at[ns, ks].T, layout=plgpu.Layout.MMA_RHS(FP8),
                     optimized=False)
      return plgpu.mma(acc, a, b)

    init = plgpu.layout_cast(jnp.zeros(tile, acc_dtype),
                             plgpu.Layout.MMA_ACC(FP8))
    o_ref[ms, ns] = lax.fori_loop(0, k // block_k, step, init)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=(m // block_m, n // block_n),
      grid_names=("m", "n"),
  )


@functools.partial(jax.jit, static_argnames=("out_dtype", "block_n"))
def fp8_matmul(x: jax.Array, w: jax.Array, *, out_dtype=None,
               block_n: int = 128) -> jax.Array:
  """``x @ w.T`` through E4M3; x: (M, K), w: (N, K), any floating dtype."""
  if not (jnp.issubdtype(x.dtype, jnp.floating)
          and jnp.issubdtype(w.dtype, jnp.floating)):
    raise TypeError("floating inputs expected")
  out_dtype = out_dtype or jnp.result_type(x.dtype, w.dtype)
  sx, sw = _per_tensor_scale(x), _per_tensor_scale(w)
  acc_dtype = jnp.result_type(sx, sw)  # float32: the scales are f32
  (m, k), (n, _) = x.shape, w.shape
  gemm = _make_fp8_gemm(m, n, k, acc_dtype=acc_dtype, block_n=block_n)
  y = gemm(_to_fp8(x, sx), _to_fp8(w, sw))
  return (y * (sx * sw)).astype(out_dtype)


if __name__ == "__main__":
  x = jnp.ones((256, 512), jnp.bfloat16)
  w = jnp.ones((256, 512), jnp.float32)
  print(fp8_matmul(x, w).dtype)
  print(fp8_matmul(x, w.astype(jnp.bfloat16), block_n=64,
                   out_dtype=jnp.float32).shape)
