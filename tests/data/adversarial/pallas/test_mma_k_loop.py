"""Warp MMA with a K loop over SMEM slices."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()


def _mma_step(a, b, acc):
  """One K step: acc += a @ b."""
  return plgpu.mma(a, b, acc)


class KLoopMmaTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("CUDA only")

  @parameterized.named_parameters(
      ("bf16_k256", jnp.bfloat16, 256, 64),
      ("f16_k512", jnp.float16, 512, 128),
  )
  def test_k_loop(self, dtype, k, block_k):
    m, n = 128, 64

    @functools.partial(
        plgpu.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        compiler_params=plgpu.CompilerParams(
            lowering_semantics=plgpu.LoweringSemantics.Lane
        ),
    )
    def kernel(a_ref, b_ref, o_ref):
      def body(i, acc):
        ks = pl.ds(pl.multiple_of(i * block_k, block_k), block_k)
        a = plgpu.load(
            a_ref.at[:, ks], layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
        )
        b = plgpu.load(
            b_ref.at[:, ks].T,
            layout=plgpu.Layout.MMA_RHS(dtype),
            optimized=False,
        )
        return _mma_step(a, b, acc)

      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
      )
      o_ref[...] = jax.lax.fori_loop(0, k // block_k, body, acc)

    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (n, k)).astype(dtype)
    ref = a.astype(np.float32) @ b.T.astype(np.float32)
    np.testing.assert_allclose(kernel(a, b), ref, atol=5e-2, rtol=5e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
