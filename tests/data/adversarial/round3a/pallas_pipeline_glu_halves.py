"""SwiGLU projection with a pipelined K loop (mma.sync path, sm80+).

x: (M, K) f16; w: (2N, K) f16 with the gate rows first and the up rows after
them. out = silu(x @ w_gate.T) * (x @ w_up.T), f16.
Each pipeline step brings a (BM, BK) x block and two (BN, BK) w blocks into
SMEM; the body consumes each block as two half-K sub-tiles.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 512, 256, 1024
BM, BN, BK = 64, 64, 64
HALF_K = BK // 2
DTYPE = jnp.float16


def swiglu(x, w):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), DTYPE),
      grid=(M // BM, N // BN),
      grid_names=("m", "n"),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(x_gmem, w_gmem, o_gmem):
    mi = lax.axis_index("m")
    ni = lax.axis_index("n")

    def body(_, x_smem, wg_smem, wu_smem, carry):
      gate, up = carry
      for h in range(BK // HALF_K):
        ks = pl.ds(h * HALF_K, HALF_K)
        xh = plgpu.load(
            x_smem.at[:, ks], layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False
        )
        wg = plgpu.load(
            wg_smem.at[:, ks].T, layout=plgpu.Layout.MMA_RHS(DTYPE), optimized=False
        )
        wu = plgpu.load(
            wu_smem.at[:, ks].T, layout=plgpu.Layout.MMA_RHS(DTYPE), optimized=False
        )
        gate = plgpu.mma(gate, xh, wg)
        up = plgpu.mma(up, xh, wu)
      return gate, up

    x_spec = pl.BlockSpec((BM, BK), lambda k: (mi, k))
    w_spec = pl.BlockSpec((BN, BK), lambda k: (ni, k))
    zero = plgpu.layout_cast(
        jnp.zeros((BM, BN), jnp.float32), plgpu.Layout.MMA_ACC(DTYPE)
    )
    gate, up = plgpu.emit_pipeline(
        body,
        grid=(K // BK,),
        in_specs=[x_spec, w_spec, w_spec],
        max_concurrent_steps=2,
        init_carry=(zero, zero),
    )(x_gmem, w_gmem.at[pl.ds(0, N)], w_gmem.at[pl.ds(N, N)])

    out = (jax.nn.silu(gate) * up).astype(o_gmem.dtype)
    o_gmem[pl.ds(mi * BM, BM), pl.ds(ni * BN, BN)] = out

  return kernel(x, w)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), DTYPE)
  w = jnp.asarray(rng.uniform(-0.1, 0.1, (2 * N, K)), DTYPE)
  xf, wf = x.astype(jnp.float32), w.astype(jnp.float32)
  ref = jax.nn.silu(xf @ wf[:N].T) * (xf @ wf[N:].T)
  np.testing.assert_allclose(swiglu(x, w), ref.astype(DTYPE), atol=2e-2, rtol=2e-2)
