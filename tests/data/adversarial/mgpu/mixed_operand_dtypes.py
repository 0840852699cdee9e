# Mixed-precision warp MMA experiments: f16 activations against bf16
# checkpoints, and an "fp32 / tf32" variant of the same kernel.

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


BLOCK = (128, 128, 64)  # (m, n, k)


def _zero_acc(layouts, shape):
  f32 = ir.F32Type.get()
  return mgpu.FragmentedArray.splat(
      arith.constant(f32, 0.0), shape, layout=layouts.acc
  )


class MixedPrecisionMmaTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(42)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_f16_activations_bf16_weights(self):
    m, n, k = BLOCK
    act_dtype, w_dtype = jnp.float16, jnp.bfloat16

    def kernel(ctx, x_ref, w_ref, out_ref, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(act_dtype))
      x = mgpu.FragmentedArray.load_untiled(
          x_ref, layout=layouts.lhs, optimized=False
      )
      # Weights come straight from the bf16 checkpoint.
      w = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(w_ref, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      out = mgpu.mma(_zero_acc(layouts, (m, n)), x, w)
      out.store_untiled(out_ref, optimized=False)

    x = self.prng.uniform(-1, 1, (m, k)).astype(act_dtype)
    w = self.prng.uniform(-1, 1, (n, k)).astype(w_dtype)
    expected = x.astype(np.float32) @ w.astype(np.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, w),
        jax.ShapeDtypeStruct((m, n), jnp.float32), (),
    )(x, w)
    np.testing.assert_allclose(result, expected, atol=1e-2)

  def test_precision_sweep(self):
    m, n, k = BLOCK
    for dtype in (jnp.float16, jnp.float32):
      with self.subTest(dtype=dtype):
        def kernel(ctx, a_ref, b_ref, out_ref, _, dtype=dtype):
          layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
          a = mgpu.FragmentedArray.load_untiled(
              a_ref, layout=layouts.lhs, optimized=False
          )
          b = mgpu.FragmentedArray.load_untiled(
              utils.memref_transpose(b_ref, (1, 0)),
              layout=layouts.rhs,
              optimized=False,
          )
          mgpu.mma(_zero_acc(layouts, (m, n)), a, b).store_untiled(
              out_ref, optimized=False
          )

        a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
        b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
        expected = a.astype(np.float32) @ b.astype(np.float32).T
        result = mgpu.as_gpu_kernel(
            kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
        )(a, b)
        np.testing.assert_allclose(result, expected, atol=1e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
