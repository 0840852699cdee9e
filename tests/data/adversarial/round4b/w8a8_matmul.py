"""W8A8 int8 matmul with dynamic per-token activation quantization.

Activations are quantized per row to int8 on the fly, weights are stored as
int8 with one float32 scale per output channel. The int8 x int8 product runs
on the warp-level MMA path (``plgpu.mma``) and is dequantized in the epilogue.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

_QDTYPE = jnp.int8


@dataclasses.dataclass(frozen=True)
class W8A8Config:
  block_m: int = 128
  block_n: int = 64
  block_k: int = 128
  out_dtype: jnp.dtype = jnp.bfloat16

  def validate(self, m: int, n: int, k: int) -> None:
    for name, dim, blk in (("m", m, self.block_m), ("n", n, self.block_n),
                           ("k", k, self.block_k)):
      if dim % blk:
        raise ValueError(f"{name}={dim} is not a multiple of block {blk}")


def quantize_rowwise(x: jax.Array, axis: int = -1):
  """Symmetric int8 quantization along ``axis``; returns (q, scale)."""
  qmax = jnp.iinfo(_QDTYPE).max
  amax = jnp.max(jnp.abs(x.astype(jnp.float32)), axis=axis, keepdims=True)
  scale = jnp.maximum(amax, jnp.finfo(jnp.float32).tiny) / qmax
  q = jnp.clip(jnp.round(x / scale), -qmax, qmax).astype(_QDTYPE)
  return q, scale


@functools.cache
def _w8a8_kernel(m: int, n: int, k: int, block_m: int, block_n: int,
                 block_k: int):
  # The result is dequantized in float32 right after the MMA, so keep the
  # running sum in float32 as well.
  acc_dtype = jnp.float32
  grid = (m // block_m, n // block_n)

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=grid,
      grid_names=("m", "n"),
  )
  def kernel(xq_ref, wq_ref, out_ref):
    ms = pl.ds(lax.axis_index("m") * block_m, block_m)
    ns = pl.ds(lax.axis_index("n") * block_n, block_n)

    def k_step(ki, acc):
      ks = pl.ds(ki * block_k, block_k)
      a = plgpu.load(xq_ref.at[ms, ks],
                     layout=plgpu.Layout.MMA_LHS(_QDTYPE), optimized=False)
      # Weights are stored (N, K); the rhs layout wants K contiguous.
      b = plgpu.load(wq_ref.at[ns, ks].T,
                     layout=plgpu.Layout.MMA_RHS(_QDTYPE), optimized=False)
      return plgpu.mma(acc, a, b)

    acc = plgpu.layout_cast(
        jnp.zeros((block_m, block_n), acc_dtype),
        plgpu.Layout.MMA_ACC(_QDTYPE),
    )
    acc = lax.fori_loop(0, k // block_k, k_step, acc)
    out_ref[ms, ns] = acc

  return kernel


@functools.partial(jax.jit, static_argnames=("config",))
def w8a8_matmul(x: jax.Array, w_q: jax.Array, w_scale: jax.Array, *,
                config: W8A8Config = W8A8Config()) -> jax.Array:
  """Computes ``x @ dequant(w_q).T`` with int8 activations and weights.

  Args:
    x: (M, K) floating activations.
    w_q: (N, K) int8 weights.
    w_scale: (N,) float32 per-output-channel scales.
    config: tiling configuration.
  """
  if w_q.dtype != _QDTYPE:
    raise TypeError(f"expected int8 weights, got {w_q.dtype}")
  m, k = x.shape
  n, _ = w_q.shape
  config.validate(m, n, k)
  x_q, x_scale = quantize_rowwise(x)
  kernel = _w8a8_kernel(m, n, k, config.block_m, config.block_n,
                        config.block_k)
  acc = kernel(x_q, w_q)
  out = acc.astype(jnp.float32) * x_scale * w_scale[None, :]
  return out.astype(config.out_dtype)


if __name__ == "__main__":
  m, n, k = 256, 128, 512
  x = jnp.ones((m, k), jnp.bfloat16)
  w = jnp.ones((n, k), jnp.bfloat16)
  w_q, w_s = quantize_rowwise(w)
  y = w8a8_matmul(x, w_q, w_s[:, 0])
  y_small = w8a8_matmul(
      x, w_q, w_s[:, 0],
      config=dataclasses.replace(W8A8Config(), block_k=64),
  )
  print(y.shape, y.dtype, y_small.shape)
