"""Matmul with a selectable compute precision, on the warp-level MMA path.

``precision`` mirrors the knobs exposed by the model config:

* ``"default"``: bf16 operands, f32 accumulation.
* ``"fp16"``:    f16 operands, f32 accumulation (better mantissa for
  activations that are known to be small).
* ``"highest"``: keep the operands in f32 (no down-cast) for numerically
  sensitive layers such as the router / logits projection.
"""

from __future__ import annotations

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def _compute_dtype(precision: str) -> jnp.dtype:
  match precision:
    case "default" | "bf16":
      return jnp.dtype(jnp.bfloat16)
    case "fp16":
      return jnp.dtype(jnp.float16)
    case "highest" | "fp32":
      return jnp.dtype(jnp.float32)
    case _:
      raise ValueError(f"unknown precision mode {precision!r}")


@functools.cache
def _matmul_kernel(m, n, k, dtype, *, block_m=128, block_n=64, block_k=64):
  acc_dtype = jnp.float32

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=(m // block_m, n // block_n),
      grid_names=("m", "n"),
  )
  def kernel(a_ref, b_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * block_m, block_m)
    ns = pl.ds(lax.axis_index("n") * block_n, block_n)

    @functools.partial(lax.fori_loop, 0, k // block_k,
                       init_val=plgpu.layout_cast(
                           jnp.zeros((block_m, block_n), acc_dtype),
                           plgpu.Layout.MMA_ACC(dtype)))
    def acc(ki, acc):
      ks = pl.ds(ki * block_k, block_k)
      a = plgpu.load(a_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(dtype),
                     optimized=False)
      b = plgpu.load(b_ref.at[ns, ks].T, layout=plgpu.Layout.MMA_RHS(dtype),
                     optimized=False)
      return plgpu.mma(acc, a, b)

    o_ref[ms, ns] = acc

  return kernel


@functools.partial(jax.jit, static_argnames=("precision", "out_dtype"))
def matmul(x: jax.Array, w: jax.Array, *, precision: str = "default",
           out_dtype=None) -> jax.Array:
  """x: (M, K) @ w: (N, K).T -> (M, N)."""
  dtype = _compute_dtype(precision)
  out_dtype = out_dtype or jnp.result_type(x, w)
  m, k = x.shape
  n = w.shape[0]
  y = _matmul_kernel(m, n, k, dtype)(x.astype(dtype), w.astype(dtype))
  return y.astype(out_dtype)


if __name__ == "__main__":
  x = jnp.ones((128, 256), jnp.float32)
  w = jnp.ones((64, 256), jnp.float32)
  print(matmul(x, w).dtype)
  # Router logits: keep full precision.
  print(matmul(x, w, precision="highest").dtype)
