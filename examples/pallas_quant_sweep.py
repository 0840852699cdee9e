"""Pallas Mosaic GPU warp-MMA tile, swept over the operand dtypes we ship.

Computes out = a @ b.T for one (128, 64) output tile with `plgpu.mma`
(`mma.sync` on sm_80+), for bf16, f16 and int8 operands. The inputs are small
integers, exactly representable in every dtype, so each result must match the
NumPy reference exactly.

Run on an sm_80+ GPU:  python pallas_quant_sweep.py
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 128
ACC_DTYPE = jnp.float32


def make_matmul(dtype):
  """Returns a kernel computing a @ b.T for (M, K) and (N, K) `dtype` inputs."""

  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), ACC_DTYPE)
  )
  def matmul(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((M, N), ACC_DTYPE), plgpu.Layout.MMA_ACC(dtype)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, a, b)

  return matmul


def main():
  rng = np.random.default_rng(0)
  for dtype in (jnp.bfloat16, jnp.float16, jnp.int8):
    a = jnp.asarray(rng.integers(-4, 5, (M, K)), dtype=dtype)
    b = jnp.asarray(rng.integers(-4, 5, (N, K)), dtype=dtype)
    out = make_matmul(dtype)(a, b)
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64).T
    np.testing.assert_allclose(np.asarray(out, np.float64), ref)
    print(f"{jnp.dtype(dtype).name:>8}: OK")


if __name__ == "__main__":
  main()
