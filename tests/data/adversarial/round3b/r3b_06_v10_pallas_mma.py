"""Pallas Mosaic GPU warp-MMA GEMV-ish kernel (skinny N), pinned to jax 0.10."""
import functools

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


def skinny_matmul(a, b_nk, *, acc_dtype=jnp.float32):
  """a: (M, K) bf16, b_nk: (N, K) bf16 with small N. Returns a @ b_nk.T."""
  m, k = a.shape
  n, _ = b_nk.shape
  dtype = a.dtype

  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((m, n), acc_dtype)
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )
    a_regs = plgpu.load(
        a_ref, (), layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
    )
    b_regs = plgpu.load(
        b_ref.T, (), layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, a_regs, b_regs)

  return kernel(a, b_nk)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (128, 128)), jnp.bfloat16)
  b = jnp.asarray(rng.uniform(-1, 1, (8, 128)), jnp.bfloat16)
  out = skinny_matmul(a, b)
  ref = a.astype(jnp.float32) @ b.astype(jnp.float32).T
  np.testing.assert_allclose(out, ref, atol=1e-2, rtol=1e-2)
