"""General dense matmul op with an MMA fast path and an XLA fallback.

The Pallas kernel only handles the cases the warp-level MMA units handle
well (matching 16-bit floating operands, tile-aligned shapes); everything
else is routed to ``jnp.dot`` so callers never need to special-case dtypes.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class MatmulConfig:
  block_m: int = 128
  block_n: int = 128
  block_k: int = 64

  def fits(self, m: int, n: int, k: int) -> bool:
    return not (m % self.block_m or n % self.block_n or k % self.block_k)


DEFAULT_CONFIG = MatmulConfig()


def _use_mma(x: jax.Array, w: jax.Array) -> bool:
  return (
      x.dtype == w.dtype
      and jnp.issubdtype(x.dtype, jnp.floating)
      and x.dtype.itemsize == 2
  )


@functools.cache
def _make_kernel(m: int, n: int, k: int, dtype, cfg: MatmulConfig):
  bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
  load = functools.partial(plgpu.load, optimized=False)

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      grid=(m // bm, n // bn),
      grid_names=("m", "n"),
  )
  def kernel(x_ref, w_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * bm, bm)
    ns = pl.ds(lax.axis_index("n") * bn, bn)

    def body(ki, acc):
      ks = pl.ds(ki * bk, bk)
      a = load(x_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(dtype))
      b = load(w_ref.at[ns, ks].T, layout=plgpu.Layout.MMA_RHS(dtype))
      return plgpu.mma(acc, a, b)

    zero = jnp.zeros((bm, bn), jnp.float32)
    acc = plgpu.layout_cast(zero, plgpu.Layout.MMA_ACC(dtype))
    o_ref[ms, ns] = lax.fori_loop(0, k // bk, body, acc)

  return kernel


@functools.partial(jax.jit, static_argnames=("config", "out_dtype"))
def dense(x: jax.Array, w: jax.Array, *, config: MatmulConfig = DEFAULT_CONFIG,
          out_dtype=None) -> jax.Array:
  """Computes ``x @ w.T`` for x: (M, K) and w: (N, K)."""
  out_dtype = jnp.result_type(x.dtype, w.dtype) if out_dtype is None else out_dtype
  (m, k), (n, _) = x.shape, w.shape
  if not _use_mma(x, w) or not config.fits(m, n, k):
    acc_type = (jnp.int32 if jnp.issubdtype(jnp.result_type(x, w), jnp.integer)
                else jnp.float32)
    return jnp.dot(x, w.T, preferred_element_type=acc_type).astype(out_dtype)
  return _make_kernel(m, n, k, x.dtype, config)(x, w).astype(out_dtype)


if __name__ == "__main__":
  m, n, k = 256, 256, 512
  print(dense(jnp.ones((m, k), jnp.bfloat16), jnp.ones((n, k), jnp.bfloat16)).dtype)
  print(dense(jnp.ones((m, k), jnp.float16), jnp.ones((n, k), jnp.float16)).dtype)
  # Routed to XLA: fp32 operands, int8 operands, mixed dtypes, ragged shapes.
  print(dense(jnp.ones((m, k), jnp.float32), jnp.ones((n, k), jnp.float32)).dtype)
  print(dense(jnp.ones((m, k), jnp.int8), jnp.ones((n, k), jnp.int8)).dtype)
  print(dense(jnp.ones((m, k), jnp.bfloat16), jnp.ones((n, k), jnp.float32)).dtype)
  print(dense(jnp.ones((100, k), jnp.bfloat16), jnp.ones((n, k), jnp.bfloat16)).dtype)
