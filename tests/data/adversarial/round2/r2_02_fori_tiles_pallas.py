"""K-looped Pallas warp-MMA matmul with the accumulator carried by fori_loop."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class Tiles:
  """Static tiling for the decode-side projection."""
  BM = 64
  BN = 64
  BK = 32
  OPERAND = jnp.dtype("float16")
  # Half-precision accumulation halves the accumulator register footprint,
  # which lets us keep two output tiles live in the epilogue.
  ACC = jnp.float16
  SEMANTICS = plgpu.LoweringSemantics.Lane


def matmul_fori(x, w_nk, *, k_steps: int):
  """Computes x @ w_nk.T where w_nk is stored (N, K)."""
  m, k = x.shape
  n, k2 = w_nk.shape
  assert k == k2 == k_steps * Tiles.BK, (k, k2, k_steps)

  def body(x_ref, w_ref, o_ref):
    def step(kk, acc):
      ks = pl.ds(pl.multiple_of(kk * Tiles.BK, Tiles.BK), Tiles.BK)
      a = plgpu.load(
          x_ref.at[:, ks],
          layout=plgpu.Layout.MMA_LHS(Tiles.OPERAND),
          optimized=False,
      )
      b = plgpu.load(
          w_ref.at[:, ks].T,
          layout=plgpu.Layout.MMA_RHS(Tiles.OPERAND),
          optimized=False,
      )
      return plgpu.mma(acc, a, b)

    acc0 = plgpu.layout_cast(
        jnp.zeros((m, n), Tiles.ACC), plgpu.Layout.MMA_ACC(Tiles.OPERAND)
    )
    acc = jax.lax.fori_loop(0, k_steps, step, acc0)
    o_ref[...] = acc.astype(o_ref.dtype)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((m, n), Tiles.OPERAND),
      compiler_params=plgpu.CompilerParams(lowering_semantics=Tiles.SEMANTICS),
  )(x, w_nk)


class ForiMatmulTest(parameterized.TestCase):

  @parameterized.parameters(1, 2, 4)
  def test_matches_reference(self, k_steps):
    if not jtu.test_device_matches(["gpu"]):
      self.skipTest("GPU only")
    rng = np.random.default_rng(1234)
    k = k_steps * Tiles.BK
    x = rng.uniform(-1, 1, (Tiles.BM, k)).astype(Tiles.OPERAND)
    w = rng.uniform(-1, 1, (Tiles.BN, k)).astype(Tiles.OPERAND)
    out = jax.jit(functools.partial(matmul_fori, k_steps=k_steps))(x, w)
    ref = (x.astype(np.float32) @ w.astype(np.float32).T).astype(Tiles.OPERAND)
    np.testing.assert_allclose(
        np.asarray(out, np.float32), ref.astype(np.float32), atol=2e-2, rtol=2e-2
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
