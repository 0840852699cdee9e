"""Pallas Mosaic GPU f16 matmul (Ampere-style mma.sync) with the whole K
extent of both operand tiles prefetched into SMEM scratch by TMA.

a: (M, K) f16, b: (N, K) f16 (weights, row-major), out: (M, N) f32.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 256, 256, 256
BM, BN, BK = 64, 64, 64
K_STEPS = K // BK
DTYPE = jnp.float16

# Warp-MMA register layouts only depend on the element bit width, so one
# representative dtype per width is enough for all our 16-bit kernels.
_LAYOUT_DTYPE = {1: jnp.int8, 2: jnp.bfloat16}[jnp.dtype(DTYPE).itemsize]
LHS = plgpu.Layout.MMA_LHS(_LAYOUT_DTYPE)
RHS = plgpu.Layout.MMA_RHS(_LAYOUT_DTYPE)
ACC = plgpu.Layout.MMA_ACC(_LAYOUT_DTYPE)


def matmul(a, b):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      grid=(M // BM, N // BN),
      grid_names=("m", "n"),
      scratch_shapes=[
          plgpu.SMEM((K_STEPS, BM, BK), DTYPE),
          plgpu.SMEM((K_STEPS, BN, BK), DTYPE),
          plgpu.Barrier(num_arrivals=2, num_barriers=K_STEPS),
      ],
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barriers):
    m_win = pl.ds(lax.axis_index("m") * BM, BM)
    n_win = pl.ds(lax.axis_index("n") * BN, BN)

    for s in range(K_STEPS):
      k_win = pl.ds(s * BK, BK)
      plgpu.copy_gmem_to_smem(a_gmem.at[m_win, k_win], a_smem.at[s], barriers.at[s])
      plgpu.copy_gmem_to_smem(b_gmem.at[n_win, k_win], b_smem.at[s], barriers.at[s])

    acc = plgpu.layout_cast(jnp.zeros((BM, BN), jnp.float32), ACC)
    for s in range(K_STEPS):
      plgpu.barrier_wait(barriers.at[s])
      a_frag = plgpu.load(a_smem.at[s], layout=LHS, optimized=False)
      b_frag = plgpu.load(b_smem.at[s].T, layout=RHS, optimized=False)
      acc = plgpu.mma(acc, a_frag, b_frag)

    o_gmem[m_win, n_win] = acc

  return kernel(a, b)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (M, K)), DTYPE)
  b = jnp.asarray(rng.uniform(-1, 1, (N, K)), DTYPE)
  ref = a.astype(jnp.float32) @ b.astype(jnp.float32).T
  np.testing.assert_allclose(matmul(a, b), ref, atol=1e-2, rtol=1e-2)
