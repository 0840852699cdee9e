# Int8 (symmetric, zero-point-free) quantized linear layer on warp MMA.

from absl.testing import absltest
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


BATCH, IN_FEATURES, OUT_FEATURES = 64, 256, 128


def quantize(x):
  scale = np.abs(x).max() / 127.0
  return np.clip(np.round(x / scale), -127, 127).astype(np.int8), scale


def linear_kernel(ctx, x_ref, w_ref, out_ref, _):
  i8 = ir.IntegerType.get_signless(8)
  i32 = ir.IntegerType.get_signless(32)
  layouts = mgpu.MMALayouts(i8)
  x = mgpu.FragmentedArray.load_untiled(
      x_ref, layout=layouts.lhs, is_signed=True, optimized=False
  )
  # The weight blob is just packed bytes straight from the checkpoint.
  w = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w_ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=False,
      optimized=False,
  )
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, i32), (BATCH, OUT_FEATURES), layout=layouts.acc,
      is_signed=True,
  )
  mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)


class QuantizedLinearTest(jtu.JaxTestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_quantized_linear(self):
    rng = np.random.default_rng(3)
    x_q, _ = quantize(rng.normal(size=(BATCH, IN_FEATURES)))
    w_q, _ = quantize(rng.normal(size=(OUT_FEATURES, IN_FEATURES)))
    f = mgpu.as_gpu_kernel(
        linear_kernel,
        (1, 1, 1),
        (128, 1, 1),
        (
            jax.ShapeDtypeStruct((BATCH, IN_FEATURES), jnp.int8),
            jax.ShapeDtypeStruct((OUT_FEATURES, IN_FEATURES), jnp.int8),
        ),
        jax.ShapeDtypeStruct((BATCH, OUT_FEATURES), jnp.int32),
        (),
    )
    expected = x_q.astype(np.int32) @ w_q.astype(np.int32).T
    np.testing.assert_array_equal(f(x_q, w_q), expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
