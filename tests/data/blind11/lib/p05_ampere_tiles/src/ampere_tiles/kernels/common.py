"""Warp-level MMA helpers shared by the tile ops."""

import functools

import jax
from jax import numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def mma_tile(a, b_t, acc_dtype):
  """Computes ``a @ b_t.T`` for ``a: (m, k)`` and ``b_t: (n, k)``."""
  m, _ = a.shape
  n, _ = b_t.shape
  dtype = jnp.dtype(a.dtype)

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )
    lhs = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    rhs = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, lhs, rhs)

  return kernel(a, b_t)
