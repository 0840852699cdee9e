"""Asymmetric uint8 matmul (gemmlowp-style) on the warp-level MMA path.

Both operands are uint8 codes with per-tensor zero points:

    real_a = sa * (qa - za),    real_b = sb * (qb - zb)

so  real_a @ real_b.T = sa * sb * (qa @ qb.T - zb * rowsum(qa)
                                   - za * rowsum(qb) + K * za * zb).

The kernel only computes the raw ``qa @ qb.T`` in int32; the zero-point
terms are applied by the wrapper.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class QuantParams:
  scale: float
  zero_point: int


def quantize_asymmetric(x: jax.Array, dtype=jnp.uint8):
  info = jnp.iinfo(dtype)
  lo, hi = jnp.min(x), jnp.max(x)
  scale = (hi - lo) / (info.max - info.min)
  zero = jnp.clip(jnp.round(info.min - lo / scale), info.min, info.max)
  q = jnp.clip(jnp.round(x / scale) + zero, info.min, info.max).astype(dtype)
  return q, scale, zero.astype(jnp.int32)


def _raw_gemm(m, n, k, dtype, *, block_m=64, block_n=64, block_k=128,
              **kernel_kwargs: Any):
  acc_dtype = jnp.int32
  # 255 * 255 * K fits in int32 for K < 2**15.
  if k >= 2**15:
    raise ValueError(f"K={k} may overflow the int32 accumulator")

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=(m // block_m, n // block_n),
      grid_names=("m", "n"),
      **kernel_kwargs,
  )
  def kernel(a_ref, b_ref, o_ref):
    mi, ni = lax.axis_index("m"), lax.axis_index("n")
    ms, ns = pl.ds(mi * block_m, block_m), pl.ds(ni * block_n, block_n)
    acc = plgpu.layout_cast(jnp.zeros((block_m, block_n), acc_dtype),
                            plgpu.Layout.MMA_ACC(dtype))
    for kk in range(k // block_k):
      ks = pl.ds(kk * block_k, block_k)
      a = plgpu.load(a_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(dtype),
                     optimized=False)
      b = plgpu.load(b_ref.at[ns, ks].T, layout=plgpu.Layout.MMA_RHS(dtype),
                     optimized=False)
      acc = plgpu.mma(acc, a, b)
    o_ref[ms, ns] = acc

  return kernel


@functools.partial(jax.jit, static_argnames=("out_dtype",))
def uint8_matmul(qa, za, sa, qb, zb, sb, *, out_dtype=jnp.float32):
  """Dequantized ``a @ b.T`` from uint8 codes qa: (M, K), qb: (N, K)."""
  if qa.dtype != jnp.uint8 or qb.dtype != jnp.uint8:
    raise TypeError(f"uint8 codes expected, got {qa.dtype}, {qb.dtype}")
  (m, k), (n, _) = qa.shape, qb.shape
  raw = _raw_gemm(m, n, k, qa.dtype)(qa, qb)
  row_a = jnp.sum(qa, axis=1, dtype=jnp.int32)[:, None]
  row_b = jnp.sum(qb, axis=1, dtype=jnp.int32)[None, :]
  corrected = raw - zb * row_a - za * row_b + k * za * zb
  return (corrected.astype(jnp.float32) * (sa * sb)).astype(out_dtype)


if __name__ == "__main__":
  a = jax.nn.relu(jnp.linspace(-1.0, 4.0, 128 * 512).reshape(128, 512))
  b = jnp.linspace(-2.0, 2.0, 64 * 512).reshape(64, 512)
  qa, sa, za = quantize_asymmetric(a)
  qb, sb, zb = quantize_asymmetric(b)
  print(uint8_matmul(qa, za, sa, qb, zb, sb).shape)
  codes_a = jnp.full((128, 512), 200, jnp.uint8)
  codes_b = jnp.full((64, 512), 131, jnp.uint8)
  print(uint8_matmul(codes_a, 128, 0.05, codes_b, 128, 0.01)[0, 0])
