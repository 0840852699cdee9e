"""Warp MMA where B is stored (N, K) and read through a transposed view."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()


class TransposedRhsMmaTest(jtu.JaxTestCase):

  def kernel(self, *args, **kwargs):
    return plgpu.kernel(
        *args,
        compiler_params=plgpu.CompilerParams(
            lowering_semantics=plgpu.LoweringSemantics.Lane
        ),
        **kwargs,
    )

  @parameterized.parameters(jnp.float16, jnp.bfloat16)
  def test_mma_transposed_rhs(self, dtype):
    m, n, k = 64, 128, 64

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
      )
      lhs_layout = plgpu.Layout.MMA_LHS(dtype)
      a = plgpu.load(a_ref, layout=lhs_layout, optimized=False)
      b = plgpu.load(b_ref.T, layout=lhs_layout, optimized=False)
      o_ref[...] = plgpu.mma(acc, a, b)

    a = jax.random.normal(jax.random.key(0), (m, k), dtype)
    b = jax.random.normal(jax.random.key(1), (n, k), dtype)
    ref = jnp.dot(a, b.T, preferred_element_type=jnp.float32)
    np.testing.assert_allclose(kernel(a, b), ref, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
