"""tokamax style: the operand dtype is the caller's, the accumulator bfloat16 (no operand dtype takes it)."""

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(x, w):
  dtype = x.dtype

  def body(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((128, 64), jnp.bfloat16), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))(x, w)
