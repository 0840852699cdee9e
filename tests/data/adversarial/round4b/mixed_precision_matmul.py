"""Dtype-generic batched-free matmul used by the model's projection layers.

Operands come straight from the caller (whatever precision the checkpoint or
the activation policy produced). The accumulator precision is derived from
the operand dtype; unsupported combinations fall back to XLA.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

# Signed int8 only: unsigned codes would need Lane lowering to keep their sign.
_MMA_DTYPES = frozenset(map(jnp.dtype, (jnp.bfloat16, jnp.float16, jnp.int8)))


def accumulator_dtype(dtype) -> jnp.dtype:
  """f32 for 16-bit floats (bf16 MMA only accumulates into f32), i32 for ints."""
  dtype = jnp.dtype(dtype)
  if jnp.issubdtype(dtype, jnp.integer):
    return jnp.dtype(jnp.int32)
  return jnp.promote_types(dtype, jnp.float32)


def _build(m, n, k, *, dtype, acc_dtype, block_m: int = 128,
           block_n: int = 64, block_k: int = 64, **kernel_kwargs: Any):
  mma_dtype = dtype

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=(m // block_m, n // block_n),
      grid_names=("m", "n"),
      **kernel_kwargs,
  )
  def kernel(x_ref, w_ref, out_ref):
    rows = pl.ds(lax.axis_index("m") * block_m, block_m)
    cols = pl.ds(lax.axis_index("n") * block_n, block_n)
    acc = plgpu.layout_cast(jnp.zeros((block_m, block_n), acc_dtype),
                            plgpu.Layout.MMA_ACC(mma_dtype))

    def body(i, acc):
      ks = pl.ds(i * block_k, block_k)
      lhs = plgpu.load(x_ref.at[rows, ks],
                       layout=plgpu.Layout.MMA_LHS(mma_dtype), optimized=False)
      rhs = plgpu.load(w_ref.at[cols, ks].T,
                       layout=plgpu.Layout.MMA_RHS(mma_dtype), optimized=False)
      return plgpu.mma(acc, lhs, rhs)

    out_ref[rows, cols] = lax.fori_loop(0, k // block_k, body, acc)

  return kernel


@functools.partial(jax.jit, static_argnames=("block_m", "block_n", "block_k"))
def projection(x: jax.Array, w: jax.Array, **tiling: int) -> jax.Array:
  """``x @ w.T`` accumulated in ``accumulator_dtype(x.dtype)``."""
  acc_dtype = accumulator_dtype(x.dtype)
  (m, k), (n, _) = x.shape, w.shape
  if x.dtype != w.dtype or x.dtype not in _MMA_DTYPES:
    return jnp.dot(x, w.T, preferred_element_type=acc_dtype)
  bm = tiling.get("block_m", 128)
  bn = tiling.get("block_n", 64)
  bk = tiling.get("block_k", 64)
  if m % bm or n % bn or k % bk:
    return jnp.dot(x, w.T, preferred_element_type=acc_dtype)
  kernel = _build(m, n, k, dtype=x.dtype, acc_dtype=acc_dtype, **tiling)
  return kernel(x, w)


def main(argv):
  dtype = jnp.dtype(argv[1] if len(argv) > 1 else "bfloat16")
  key_x, key_w = jax.random.split(jax.random.key(0))
  x = jax.random.normal(key_x, (256, 512)).astype(dtype)
  w = jax.random.normal(key_w, (128, 512)).astype(dtype)
  y = projection(x, w, block_k=128)
  print(dtype, "->", y.dtype, y.shape)


if __name__ == "__main__":
  main(sys.argv)
