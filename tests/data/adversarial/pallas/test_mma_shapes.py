"""Shape coverage for warp-level MMA: rectangular tiles and odd block sizes."""

import functools

from absl.testing import absltest
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()

DTYPE = jnp.float16


def _mma_kernel(m, n, *, transpose_rhs):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(DTYPE)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False)
    rhs = b_ref.T if transpose_rhs else b_ref
    b = plgpu.load(rhs, layout=plgpu.Layout.MMA_RHS(DTYPE), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  return kernel


class MmaShapeTest(jtu.JaxTestCase):

  def test_rectangular(self):
    m, n, k = 128, 64, 128
    # B is stored (N, K), like the other tests in this file.
    a = jnp.ones((m, k), DTYPE)
    b = jnp.ones((n, k), DTYPE)
    out = _mma_kernel(m, n, transpose_rhs=False)(a, b)
    np.testing.assert_allclose(out, np.full((m, n), k, np.float32))

  def test_block_m_96(self):
    m, n, k = 96, 64, 128
    a = jnp.ones((m, k), DTYPE)
    b = jnp.ones((n, k), DTYPE)
    out = _mma_kernel(m, n, transpose_rhs=True)(a, b)
    np.testing.assert_allclose(out, np.full((m, n), k, np.float32))


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
