# Negative tests for warp-level MMA argument checking, plus one positive
# control that uses the same helpers.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


M = N = K = 128


def _operands(a_ref, b_ref, dtype, *, m_warps=4):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
  signed = utils.is_signed(dtype)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=signed, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      is_signed=signed, optimized=False)
  return layouts, a, b


def _zeros(layouts, acc_type, *, is_signed=None):
  value = 0 if isinstance(acc_type, ir.IntegerType) else 0.0
  return mgpu.FragmentedArray.splat(
      arith.constant(acc_type, value), (M, N), layout=layouts.acc,
      is_signed=is_signed)


class WarpMmaErrorsTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(0)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def _build(self, kernel, dtype, out_dtype):
    a = jax.ShapeDtypeStruct((M, K), dtype)
    b = jax.ShapeDtypeStruct((N, K), dtype)
    out = jax.ShapeDtypeStruct((M, N), out_dtype)
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out, ())

  def test_invalid_m_warps(self):
    with self.assertRaisesRegex(ValueError, "m_warps must be 1, 2, or 4"):
      mgpu.MMALayouts(ir.F16Type.get(), m_warps=3)

  def test_half_accumulator_rejected(self):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts, a, b = _operands(a_ref, b_ref, jnp.float16)
      acc = _zeros(layouts, ir.F16Type.get())
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    with self.assertRaisesRegex(
        NotImplementedError, "Only f32 accumulator supported"):
      self._build(kernel, jnp.float16, jnp.float16)

  @parameterized.parameters(jnp.int8, jnp.uint8)
  def test_unsigned_accumulator_rejected(self, dtype):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts, a, b = _operands(a_ref, b_ref, dtype)
      acc = _zeros(layouts, ir.IntegerType.get_signless(32), is_signed=False)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    with self.assertRaisesRegex(ValueError, "Only signed accumulator"):
      self._build(kernel, dtype, jnp.uint32)

  def test_integer_with_float_accumulator_rejected(self):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts, a, b = _operands(a_ref, b_ref, jnp.int8)
      mgpu.mma(_zeros(layouts, ir.F32Type.get()), a, b).store_untiled(
          out_ref, optimized=False)

    with self.assertRaises(NotImplementedError):
      self._build(kernel, jnp.int8, jnp.float32)

  def test_swapped_arguments_rejected(self):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts, a, b = _operands(a_ref, b_ref, jnp.bfloat16)
      acc = _zeros(layouts, ir.F32Type.get())
      mgpu.mma(a, b, acc).store_untiled(out_ref, optimized=False)

    with self.assertRaisesRegex(ValueError, "mismatch"):
      mgpu.as_gpu_kernel(
          kernel, (1, 1, 1), (128, 1, 1),
          (jax.ShapeDtypeStruct((M, K), jnp.bfloat16),
           jax.ShapeDtypeStruct((N, K), jnp.bfloat16)),
          jax.ShapeDtypeStruct((M, N), jnp.float32), ())

  def test_mixed_m_warps_rejected(self):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      _, a, b = _operands(a_ref, b_ref, jnp.float16, m_warps=2)
      acc_layouts = mgpu.MMALayouts(ir.F16Type.get(), m_warps=4)
      acc = _zeros(acc_layouts, ir.F32Type.get())
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    with self.assertRaisesRegex(ValueError, "Expected MMALayouts.lhs"):
      self._build(kernel, jnp.float16, jnp.float32)

  def test_positive_control(self):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts, a, b = _operands(a_ref, b_ref, jnp.int8)
      acc = _zeros(layouts, ir.IntegerType.get_signless(32), is_signed=True)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.integers(-128, 128, (M, K)).astype(jnp.int8)
    b = self.prng.integers(-128, 128, (N, K)).astype(jnp.int8)
    f = self._build(kernel, jnp.int8, jnp.int32)
    np.testing.assert_array_equal(
        f(a, b), a.astype(np.int32) @ b.astype(np.int32).T)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
