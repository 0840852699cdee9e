"""int8 x int8 -> int32 GEMM written with pl.pallas_call + BlockSpecs.

Each grid step gets an SMEM block of x rows (BM, K) and of w rows (BN, K); the
kernel walks K in BK-wide windows of those blocks.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 256, 128, 256
BM, BN, BK = 64, 32, 64


def _kn(ref_nk):
  return plgpu.transpose_ref(ref_nk, (1, 0))


@functools.partial(
    pl.pallas_call,
    out_shape=jax.ShapeDtypeStruct((M, N), jnp.int32),
    in_specs=[
        pl.BlockSpec((BM, K), lambda i, j: (i, 0)),
        pl.BlockSpec((BN, K), lambda i, j: (j, 0)),
    ],
    out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
    grid=(M // BM, N // BN),
    compiler_params=plgpu.CompilerParams(
        dimension_semantics=["parallel", "parallel"],
        lowering_semantics=plgpu.LoweringSemantics.Lane,
    ),
)
def int8_matmul(x_ref, w_ref, o_ref):
  operand = x_ref.dtype
  acc0 = plgpu.layout_cast(
      jnp.zeros((BM, BN), jnp.int32), plgpu.Layout.MMA_ACC(operand)
  )

  def k_step(kk, acc):
    k_win = pl.ds(kk * BK, BK)
    x = plgpu.load(
        x_ref.at[:, k_win], layout=plgpu.Layout.MMA_LHS(operand), optimized=False
    )
    w = plgpu.load(
        _kn(w_ref.at[:, k_win]),
        layout=plgpu.Layout.MMA_RHS(w_ref.dtype),
        optimized=False,
    )
    return plgpu.mma(acc, x, w)

  o_ref[...] = lax.fori_loop(0, K // BK, k_step, acc0)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.integers(-128, 128, (M, K)), jnp.int8)
  w = jnp.asarray(rng.integers(-128, 128, (N, K)), jnp.int8)
  ref = x.astype(jnp.int32) @ w.astype(jnp.int32).T
  np.testing.assert_array_equal(int8_matmul(x, w), ref)
