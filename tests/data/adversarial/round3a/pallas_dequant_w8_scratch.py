"""Weight-only int8 linear layer (W8A16) on the mma.sync path.

x: (M, K) bf16 activations, wq: (N, K) int8 weights with a per-tensor scale.
Each K step dequantizes a (BN, BK) weight tile into an SMEM scratch buffer,
then feeds it to the warp MMA as the rhs. out: (M, N) bf16.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 256, 256, 512
BM, BN, BK = 64, 64, 64
W_SCALE = 0.0125
ACT_DTYPE = jnp.bfloat16
DEQ_DTYPE = jnp.float16


def w8a16_linear(x, wq):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), ACT_DTYPE),
      grid=(M // BM, N // BN),
      grid_names=("m", "n"),
      scratch_shapes=[plgpu.SMEM((BN, BK), DEQ_DTYPE)],
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(x_gmem, wq_gmem, o_gmem, w_smem):
    m_win = pl.ds(lax.axis_index("m") * BM, BM)
    n_win = pl.ds(lax.axis_index("n") * BN, BN)

    acc = plgpu.layout_cast(
        jnp.zeros((BM, BN), w_smem.dtype), plgpu.Layout.MMA_ACC(w_smem.dtype)
    )
    for kk in range(K // BK):
      k_win = pl.ds(kk * BK, BK)
      w_tile = wq_gmem[n_win, k_win].astype(jnp.float32) * W_SCALE
      w_smem[...] = w_tile.astype(w_smem.dtype)
      plgpu.commit_smem()

      x_frag = plgpu.load(
          x_gmem.at[m_win, k_win],
          layout=plgpu.Layout.MMA_LHS(x_gmem.dtype),
          optimized=False,
      )
      w_frag = plgpu.load(
          w_smem.T, layout=plgpu.Layout.MMA_RHS(x_gmem.dtype), optimized=False
      )
      acc = plgpu.mma(acc, x_frag, w_frag)

    o_gmem[m_win, n_win] = acc.astype(o_gmem.dtype)

  return kernel(x, wq)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), ACT_DTYPE)
  wq = jnp.asarray(rng.integers(-127, 128, (N, K)), jnp.int8)
  ref = x.astype(jnp.float32) @ (wq.astype(jnp.float32) * W_SCALE).T
  np.testing.assert_allclose(
      w8a16_linear(x, wq).astype(jnp.float32), ref, atol=5e-2, rtol=2e-2
  )
