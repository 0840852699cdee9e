"""Shape-adaptive warp MMA (jax 0.12): MMALayouts.for_shape picks m_warps."""
from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class ForShapeMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Needs sm_90")
    self.prng = np.random.default_rng(11)

  @parameterized.parameters(
      (jnp.bfloat16, 96, 48),   # m_warps=2
      (jnp.float16, 16, 128),   # m_warps=1
      (jnp.int8, 128, 64),      # m_warps=4
  )
  def test_for_shape(self, dtype, m, n):
    k = 64
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32
    ab_is_signed = utils.is_signed(dtype)
    acc_is_signed = utils.is_signed(acc_dtype)

    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts.for_shape(dtype, m, n)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, is_signed=ab_is_signed, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=layouts.rhs,
          is_signed=ab_is_signed,
          optimized=False,
      )
      zero = arith.constant(
          utils.dtype_to_ir_type(acc_dtype), 0 if is_integer else 0.0
      )
      acc = mgpu.FragmentedArray.splat(
          zero, (m, n), layout=layouts.acc, is_signed=acc_is_signed
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    if is_integer:
      a = self.prng.integers(-128, 128, (m, k)).astype(dtype)
      b = self.prng.integers(-128, 128, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((m, n), acc_dtype), (),
    )(a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
