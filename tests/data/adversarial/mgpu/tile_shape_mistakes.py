# Rectangular warp-MMA tiles and a small-K sweep.

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


class RectangularMmaTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(99)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_tall_skinny(self):
    m, n, k = 128, 64, 128
    dtype = jnp.bfloat16

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(ir.BF16Type.get())
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          optimized=False)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(ir.F32Type.get(), 0.0), (m, k), layout=layouts.acc)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  def test_single_k_step(self):
    # One m16n8k16 step along K.
    m, n, k = 64, 64, 16
    for dtype in (jnp.float16, jnp.int8):
      is_integer = jnp.issubdtype(dtype, jnp.integer)
      acc_dtype = jnp.int32 if is_integer else jnp.float32

      def kernel(ctx, a_ref, b_ref, out_ref, _, dtype=dtype,
                 acc_dtype=acc_dtype):
        layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
        signed = utils.is_signed(dtype)
        a = mgpu.FragmentedArray.load_untiled(
            a_ref, layout=layouts.lhs, is_signed=signed, optimized=False)
        b = mgpu.FragmentedArray.load_untiled(
            utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
            is_signed=signed, optimized=False)
        acc = mgpu.FragmentedArray.splat(
            utils.c(0 if is_integer else 0.0,
                    utils.dtype_to_ir_type(acc_dtype)),
            (m, n), layout=layouts.acc,
            is_signed=utils.is_signed(acc_dtype))
        mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

      if is_integer:
        a = self.prng.integers(-128, 128, (m, k)).astype(dtype)
        b = self.prng.integers(-128, 128, (n, k)).astype(dtype)
      else:
        a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
        b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
      expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
      result = mgpu.as_gpu_kernel(
          kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
      )(a, b)
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
