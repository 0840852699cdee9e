# Int8 weight-only / activation quantized GEMM built on warp-level MMA.
#
# The int8 x int8 product is accumulated and then rescaled to f32 in
# registers before being written out.

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

try:
  import jax._src.lib.mosaic_gpu  # noqa: F401
  HAS_MOSAIC_GPU = True
except ImportError:
  HAS_MOSAIC_GPU = False


M, N, K = 128, 128, 128
SCALE = 1.0 / 127.0


class QuantizedWarpMmaTest(parameterized.TestCase):

  def setUp(self):
    if not HAS_MOSAIC_GPU:
      self.skipTest("jaxlib built without Mosaic GPU")
    if (not jtu.test_device_matches(["cuda"]) or
        not jtu.is_cuda_compute_capability_at_least("8.0")):
      self.skipTest("Needs an sm80+ GPU")
    super().setUp()
    self.prng = np.random.default_rng(1234)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_int8_gemm_dequantized_output(self):
    def kernel(ctx, x_ref, w_ref, out_ref, _):
      i8 = ir.IntegerType.get_signless(8)
      f32 = ir.F32Type.get()
      layouts = mgpu.MMALayouts(i8)
      x = mgpu.FragmentedArray.load_untiled(
          x_ref, layout=layouts.lhs, is_signed=True, optimized=False
      )
      w_t = utils.memref_transpose(w_ref, (1, 0))
      w = mgpu.FragmentedArray.load_untiled(
          w_t, layout=layouts.rhs, is_signed=True, optimized=False
      )
      # The output is dequantized anyway, so accumulate directly in f32.
      acc = mgpu.FragmentedArray.splat(
          arith.constant(f32, 0.0), (M, N), layout=layouts.acc
      )
      acc = mgpu.mma(acc, x, w)
      (acc * SCALE).store_untiled(out_ref, optimized=False)

    x = self.prng.integers(-128, 128, (M, K)).astype(jnp.int8)
    w = self.prng.integers(-128, 128, (N, K)).astype(jnp.int8)
    out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
    f = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, w), out_shape, ())
    expected = (x.astype(np.int32) @ w.astype(np.int32).T).astype(np.float32)
    np.testing.assert_allclose(f(x, w), expected * SCALE, rtol=1e-6)

  @parameterized.parameters(jnp.bfloat16, jnp.float16)
  def test_half_gemm_zero_init(self, dtype):
    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      zero = utils.c(0.0, ir.F32Type.get())
      acc = mgpu.FragmentedArray.splat(zero, (M, N))
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.uniform(-1, 1, (M, K)).astype(dtype)
    b = self.prng.uniform(-1, 1, (N, K)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
