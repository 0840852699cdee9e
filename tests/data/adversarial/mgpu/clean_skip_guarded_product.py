# Operand x accumulator dtype product for warp MMA; unsupported pairs are
# filtered out by skip guards, like the WGMMA/TCGen05 tests do.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class MmaDtypeProductTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(77)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.float32, jnp.int8, jnp.uint8),
      acc_dtype=(jnp.float32, jnp.float16, jnp.int32),
      m_warps=(1, 2, 4),
  )
  def test_mma(self, dtype, acc_dtype, m_warps):
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    if dtype == jnp.float32:
      self.skipTest("f32 (tf32) operands are not supported by mma.sync here.")
    if is_integer != (acc_dtype == jnp.int32):
      self.skipTest("Integer operands need an int32 accumulator, floats f32.")
    if acc_dtype == jnp.float16:
      self.skipTest("Only f32 accumulators are supported for floats.")

    mlir_dtype = utils.dtype_to_ir_type(dtype)
    k_tile = 256 // utils.bitwidth(mlir_dtype)
    m = 16 * m_warps * 2
    n = 8 * (4 // m_warps) * 2
    k = 2 * k_tile

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
      ab_signed = utils.is_signed(dtype)
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, is_signed=ab_signed, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          is_signed=ab_signed, optimized=False)
      acc_ty = utils.dtype_to_ir_type(acc_dtype)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0 if is_integer else 0.0, acc_ty), (m, n),
          layout=layouts.acc, is_signed=utils.is_signed(acc_dtype))
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    if is_integer:
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((m, n), acc_dtype), (),
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
