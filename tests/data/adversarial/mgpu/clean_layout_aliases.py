# Warp MMA kernels that share register layouts between dtypes of the same
# width, and reuse the WGMMA accumulator layout for the MMA accumulator.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


M, N, K = 128, 64, 128

# Layouts only depend on the element bit width, so one table per width.
_LAYOUT_TYPE_FOR_WIDTH = {
    16: lambda: ir.F16Type.get(),
    8: lambda: ir.Float8E4M3FNType.get(),
}


def _layouts_for(dtype):
  bits = jnp.dtype(dtype).itemsize * 8
  return mgpu.MMALayouts(_LAYOUT_TYPE_FOR_WIDTH[bits]())


class SharedLayoutTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(2024)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_bf16_with_f16_layouts_and_wgmma_acc(self):
    dtype = jnp.bfloat16

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(ir.F16Type.get())
      a = fa.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False)
      b = fa.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          optimized=False)
      acc = fa.FragmentedArray.splat(
          arith.constant(ir.F32Type.get(), 0.0), (M, N),
          layout=fa.WGMMA_LAYOUT)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.uniform(-1, 1, (M, K)).astype(dtype)
    b = self.prng.uniform(-1, 1, (N, K)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.named_parameters(("s8", jnp.int8), ("f16", jnp.float16))
  def test_width_keyed_layouts(self, dtype):
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32

    def kernel(ctx, acc_ref, a_ref, b_ref, out_ref, _):
      layouts = _layouts_for(dtype)
      signed = utils.is_signed(dtype)
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, is_signed=signed, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          is_signed=signed, optimized=False)
      acc = mgpu.FragmentedArray.load_untiled(
          acc_ref, layout=mgpu.WGMMA_LAYOUT,
          is_signed=True if is_integer else None, optimized=False)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    if is_integer:
      a = self.prng.integers(-128, 128, (M, K)).astype(dtype)
      b = self.prng.integers(-128, 128, (N, K)).astype(dtype)
      acc = self.prng.integers(-1000, 1000, (M, N)).astype(acc_dtype)
    else:
      a = self.prng.uniform(-1, 1, (M, K)).astype(dtype)
      b = self.prng.uniform(-1, 1, (N, K)).astype(dtype)
      acc = self.prng.uniform(-1, 1, (M, N)).astype(acc_dtype)
    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
