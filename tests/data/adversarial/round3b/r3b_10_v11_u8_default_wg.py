"""Integer Pallas warp-MMA tests (jax 0.11).

The base class runs with whatever lowering semantics `plgpu.CompilerParams()`
defaults to; the Lane subclass pins the lane-level lowering.
"""
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class IntMmaTest(parameterized.TestCase):
  COMPILER_PARAMS = plgpu.CompilerParams()

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Needs sm_90")

  def kernel(self, body, out_type):
    return plgpu.kernel(
        body, out_type=out_type, compiler_params=self.COMPILER_PARAMS
    )

  @parameterized.parameters(jnp.int8, jnp.uint8)
  def test_int_mma(self, dtype):
    m, n, k = 128, 64, 128
    dtype = jnp.dtype(dtype)

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.int32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.int32), plgpu.Layout.MMA_ACC(dtype)
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    info = jnp.iinfo(dtype)
    rng = np.random.default_rng(5)
    a = rng.integers(info.min, info.max + 1, (m, k)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
    ref = a.astype(np.int32) @ b.astype(np.int32).T
    np.testing.assert_array_equal(kernel(a, b), ref)


class IntMmaLaneTest(IntMmaTest):
  COMPILER_PARAMS = plgpu.CompilerParams(
      lowering_semantics=plgpu.LoweringSemantics.Lane
  )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
