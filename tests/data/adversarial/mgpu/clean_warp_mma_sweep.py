# Full dtype x warp-split sweep of warp-level MMA with a GMEM accumulator.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


FP8_DTYPES = (jnp.float8_e4m3fn, jnp.float8_e5m2)
ALL_DTYPES = (jnp.bfloat16, jnp.float16, *FP8_DTYPES,
              jnp.int8, jnp.uint8, jnp.int4, jnp.uint4)


def accumulator_dtype(dtype):
  return jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32


def random_operand(rng, dtype, shape):
  if jnp.issubdtype(dtype, jnp.integer):
    iinfo = jnp.iinfo(dtype)
    return rng.integers(iinfo.min, iinfo.max + 1, shape).astype(dtype)
  return rng.uniform(-1, 1, shape).astype(dtype)


def load_operands(a_ref, b_ref, acc_ref, dtype, m_warps):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
  ab_is_signed = utils.is_signed(dtype)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=ab_is_signed, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      is_signed=ab_is_signed, optimized=False)
  acc = mgpu.FragmentedArray.load_untiled(
      acc_ref, layout=layouts.acc,
      is_signed=utils.is_signed(accumulator_dtype(dtype)), optimized=False)
  return acc, a, b


class WarpMmaSweepTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    if not jtu.is_cuda_compute_capability_at_least("8.0"):
      self.skipTest("mma.sync needs sm80+")
    super().setUp()
    self.prng = np.random.default_rng(1234)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.product(dtype=ALL_DTYPES, m_warps=(1, 2, 4))
  def test_warp_mma(self, dtype, m_warps):
    if dtype in FP8_DTYPES and not jtu.is_cuda_compute_capability_at_least(
        "8.9"):
      self.skipTest("fp8 mma.sync needs sm89+")
    m, n, k = 128, 128, 128
    dtype = jnp.dtype(dtype)
    acc_dtype = accumulator_dtype(dtype)

    def kernel(ctx, acc_ref, a_ref, b_ref, out_ref, _):
      acc, a, b = load_operands(a_ref, b_ref, acc_ref, dtype, m_warps)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = random_operand(self.prng, dtype, (m, k))
    b = random_operand(self.prng, dtype, (n, k))
    if jnp.issubdtype(dtype, jnp.integer):
      acc = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      acc = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    if jnp.issubdtype(dtype, jnp.integer):
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
