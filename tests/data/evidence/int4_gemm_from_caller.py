"""A library int4 GEMM tile: the caller's packed data decides int4 or uint4, the kernel code
decides the rest. Every 4-bit dtype fails with this float32 accumulator: int4 and uint4 need
int32, and float4_e2m1fn is no operand type of the warp-level MMA (MMA101, by the operand dtype).
"""

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 256


def int4_matmul(x, w):
  def body(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.int4))
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int4), optimized=False)
    b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int4), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))
  return f(x, w)
