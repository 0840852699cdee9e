"""Half-precision GEMM in Pallas Mosaic GPU with the warp-level `plgpu.mma`.

out[M, N] = x[M, K] @ w[N, K].T for float16 x and w, one (TILE_M, N) row block
of the output per CTA. The kernel writes the accumulator out and the wrapper
returns it as float16.

Run on an sm_80+ GPU:  python pallas_f16_acc_gemm.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 512, 64, 128
TILE_M = 128
DTYPE = jnp.float16
# PTX mma.sync.m16n8k16 can accumulate in f16, which halves the accumulator's
# register footprint, and the output is f16 anyway.
ACC_DTYPE = jnp.float16


def gemm_body(x_ref, w_ref, o_ref):
  i = jax.lax.axis_index("m")
  rows = pl.ds(i * TILE_M, TILE_M)
  acc = plgpu.layout_cast(
      jnp.zeros((TILE_M, N), ACC_DTYPE), plgpu.Layout.MMA_ACC(DTYPE)
  )
  x = plgpu.load(x_ref.at[rows], layout=plgpu.Layout.MMA_LHS(DTYPE),
                 optimized=False)
  w = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(DTYPE), optimized=False)
  o_ref[rows] = plgpu.mma(acc, x, w)


def gemm(x, w):
  kernel = plgpu.kernel(
      gemm_body,
      out_type=jax.ShapeDtypeStruct((M, N), ACC_DTYPE),
      grid=(M // TILE_M,),
      grid_names=("m",),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  return kernel(x, w).astype(DTYPE)


def main():
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), DTYPE)
  w = jnp.asarray(rng.uniform(-1, 1, (N, K)), DTYPE)
  out = gemm(x, w)
  ref = np.asarray(x, np.float32) @ np.asarray(w, np.float32).T
  np.testing.assert_allclose(np.asarray(out, np.float32), ref,
                             atol=2e-2, rtol=2e-2)
  print("f16 gemm: OK")


if __name__ == "__main__":
  main()
