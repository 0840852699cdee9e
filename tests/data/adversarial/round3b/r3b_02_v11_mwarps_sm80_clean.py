"""Ampere-compatible warp MMA sweep (jax 0.11, built for sm_80).

Only operand types whose mma.sync forms exist on sm_80 are swept here; the
fp8 variants live in the Ada/Hopper suite.
"""
from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class AmpereWarpMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("8.0"):
      self.skipTest("Needs sm_80 or newer")
    self.prng = np.random.default_rng(0)

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8, jnp.uint8, jnp.int4),
      m_warps=(1, 2, 4),
  )
  def test_warp_mma(self, dtype, m_warps):
    m, n, k = 128, 64, 128
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32

    def kernel(ctx, acc, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(
          utils.dtype_to_ir_type(dtype), m_warps=m_warps
      )
      ab_is_signed = utils.is_signed(dtype)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, is_signed=ab_is_signed, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=layouts.rhs,
          is_signed=ab_is_signed,
          optimized=False,
      )
      acc_fa = mgpu.FragmentedArray.load_untiled(
          acc,
          layout=layouts.acc,
          is_signed=utils.is_signed(acc_dtype),
          optimized=False,
      )
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    if is_integer:
      info = jnp.iinfo(dtype)
      a = self.prng.integers(info.min, info.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
      acc = self.prng.integers(-50, 50, (m, n)).astype(acc_dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
      acc = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)

    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
