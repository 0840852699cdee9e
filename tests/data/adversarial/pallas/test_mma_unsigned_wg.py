"""Integer warp MMA tests (int8 / uint8 operands, int32 accumulator)."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
import jax.experimental.pallas.mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()

M, N, K = 128, 64, 128


class IntegerMmaTest(jtu.JaxTestCase):
  SEMANTICS = plgpu.LoweringSemantics.Lane

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("8.0"):
      self.skipTest("mma.sync needs sm80+")

  def _kernel(self, body, out_type):
    return plgpu.kernel(
        body,
        out_type=out_type,
        compiler_params=plgpu.CompilerParams(
            lowering_semantics=self.SEMANTICS
        ),
    )

  def _run_mma(self, dtype):
    def body(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((M, N), jnp.int32), plgpu.Layout.MMA_ACC(dtype)
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    f = self._kernel(body, jax.ShapeDtypeStruct((M, N), jnp.int32))
    info = jnp.iinfo(dtype)
    rng = np.random.default_rng(1234)
    a = rng.integers(info.min, info.max + 1, (M, K)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (N, K)).astype(dtype)
    expected = a.astype(np.int32) @ b.T.astype(np.int32)
    np.testing.assert_array_equal(f(a, b), expected)

  @parameterized.named_parameters(
      ("int8", jnp.int8),
      ("uint8", jnp.uint8),
  )
  def test_integer_mma(self, dtype):
    self._run_mma(jnp.dtype(dtype))


class IntegerMmaWGTest(IntegerMmaTest):
  SEMANTICS = plgpu.LoweringSemantics.Warpgroup


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
