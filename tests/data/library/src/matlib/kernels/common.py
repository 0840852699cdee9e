"""The kernel body every matlib op shares: one (M, N) tile of `a @ b.T` with `plgpu.mma`."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 128


def mma_tile(a_ref, b_ref, acc_dtype):
  """Loads the (M, K) and (N, K) operand tiles in the MMA layouts of their dtype and
  multiplies them into a zero accumulator of `acc_dtype`."""
  dtype = a_ref.dtype
  acc = plgpu.layout_cast(jnp.zeros((M, N), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
  return plgpu.mma(acc, a, b)
