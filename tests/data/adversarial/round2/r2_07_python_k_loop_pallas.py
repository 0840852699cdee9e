"""Statically unrolled K loop over GMEM tiles, Pallas Mosaic GPU (Lane)."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


def unrolled_matmul(x, w_nk, *, block_k=64, out_dtype=None):
  m, k = x.shape
  n, _ = w_nk.shape
  dtype = x.dtype
  out_dtype = out_dtype or dtype
  if k % block_k:
    raise ValueError(f"{k=} must be a multiple of {block_k=}")

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), out_dtype),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
    )
    for kt in range(k // block_k):
      ks = pl.ds(kt * block_k, block_k)
      lhs = plgpu.load(
          x_ref.at[:, ks], layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
      )
      rhs = plgpu.load(
          w_ref.at[:, ks].T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      acc = plgpu.mma(lhs, rhs, acc)
    o_ref[...] = acc.astype(out_dtype)

  return kernel(x, w_nk)


class UnrolledMatmulTest(parameterized.TestCase):

  @parameterized.product(
      dtype_name=("bfloat16", "float16"),
      k=(64, 256),
  )
  def test_unrolled(self, dtype_name, k):
    dtype = jnp.dtype(dtype_name)
    rng = np.random.default_rng(k)
    x = rng.uniform(-1, 1, (128, k)).astype(dtype)
    w = rng.uniform(-1, 1, (64, k)).astype(dtype)
    out = unrolled_matmul(x, w, out_dtype=jnp.float32)
    ref = x.astype(np.float32) @ w.astype(np.float32).T
    np.testing.assert_allclose(out, ref, atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
