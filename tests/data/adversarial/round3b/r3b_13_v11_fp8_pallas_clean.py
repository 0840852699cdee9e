"""FP8 Pallas warp-MMA tests (jax 0.11), Hopper build (sm_90a)."""
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


def fp8_mma(a, b_nk, scale):
  m, k = a.shape
  n, _ = b_nk.shape
  dtype = a.dtype

  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
    )
    lhs = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    rhs = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, lhs, rhs) * scale

  return kernel(a, b_nk)


class Fp8MmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Needs sm_90")

  @parameterized.parameters(jnp.float8_e4m3fn, jnp.float8_e5m2)
  def test_fp8(self, dtype):
    m, n, k = 128, 64, 128
    rng = np.random.default_rng(9)
    a = jnp.asarray(rng.uniform(-1, 1, (m, k)), dtype)
    b = jnp.asarray(rng.uniform(-1, 1, (n, k)), dtype)
    out = fp8_mma(a, b, 0.5)
    ref = 0.5 * (a.astype(jnp.float32) @ b.astype(jnp.float32).T)
    np.testing.assert_allclose(out, ref, atol=5e-2, rtol=5e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
