import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
DT = jnp.float16
LANE = plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)


@functools.partial(
    plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32), compiler_params=LANE)
def kernel(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(DT))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DT, m_warps=2), optimized=False)
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(DT, m_warps=2), optimized=False)
  o_ref[...] = plgpu.mma(acc, a, b)


out = kernel(jnp.ones((M, K), DT), jnp.ones((N, K), DT))
