"""bf16 GEMM over a long K with the warp-level MMA in Pallas Mosaic GPU.

out (M, N) f32 = x (M, K) @ w (N, K).T. The kernel walks K in TILE_K steps and
carries one f32 accumulator in the MMA accumulator layout across the steps.
The K loop is unrolled at trace time (K is small and static).

Run on an sm_80+ GPU:  python pallas_kloop_arg_order.py
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 512
TILE_K = 128
DTYPE = jnp.bfloat16


@functools.partial(
    plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32)
)
def gemm(x_ref, w_ref, o_ref):
  acc = plgpu.layout_cast(
      jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(DTYPE)
  )
  for k0 in range(0, K, TILE_K):
    ks = pl.ds(k0, TILE_K)
    x = plgpu.load(x_ref.at[:, ks], layout=plgpu.Layout.MMA_LHS(DTYPE),
                   optimized=False)
    w = plgpu.load(w_ref.at[:, ks].T, layout=plgpu.Layout.MMA_RHS(DTYPE),
                   optimized=False)
    acc = plgpu.mma(x, w, acc)
  o_ref[...] = acc


def main():
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), DTYPE)
  w = jnp.asarray(rng.uniform(-1, 1, (N, K)), DTYPE)
  out = gemm(x, w)
  ref = np.asarray(x, np.float32) @ np.asarray(w, np.float32).T
  np.testing.assert_allclose(np.asarray(out), ref, atol=1e-3, rtol=1e-3)
  print("bf16 K-loop gemm: OK")


if __name__ == "__main__":
  main()
