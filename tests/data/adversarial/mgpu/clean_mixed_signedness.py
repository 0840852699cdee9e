# Signed x unsigned byte products on warp MMA (mma.sync supports s8 x u8),
# with an int16 side channel staged through an MMA register layout.

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


M_WARPS = 2
M, N, K = 64, 64, 64


def mixed_sign_kernel(ctx, a_ref, b_ref, x_ref, out_ref, x_out_ref, _, *,
                      a_dtype, b_dtype):
  i8 = ir.IntegerType.get_signless(8)
  i32 = ir.IntegerType.get_signless(32)
  layouts = mgpu.MMALayouts(i8, m_warps=M_WARPS)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=utils.is_signed(a_dtype),
      optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      is_signed=utils.is_signed(b_dtype), optimized=False)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(i32, 0), (M, N), layout=layouts.acc, is_signed=True)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

  # Side channel: round-trip an int16 tile through the 16-bit lhs register
  # layout (this is only a copy, no MMA involved).
  staging = mgpu.MMALayouts(ir.IntegerType.get_signless(16))
  x = mgpu.FragmentedArray.load_untiled(
      x_ref, layout=staging.lhs, is_signed=True, optimized=False)
  x.store_untiled(x_out_ref, optimized=False)


class MixedSignednessTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(8)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.parameters(
      (jnp.int8, jnp.uint8),
      (jnp.uint8, jnp.int8),
      (jnp.uint8, jnp.uint8),
  )
  def test_mixed_sign(self, a_dtype, b_dtype):
    def rand(dtype, shape):
      iinfo = jnp.iinfo(dtype)
      return self.prng.integers(iinfo.min, iinfo.max + 1, shape).astype(dtype)

    a = rand(a_dtype, (M, K))
    b = rand(b_dtype, (N, K))
    x = self.prng.integers(-10000, 10000, (128, 128)).astype(jnp.int16)
    kernel = functools.partial(
        mixed_sign_kernel, a_dtype=a_dtype, b_dtype=b_dtype)
    out_shapes = (
        jax.ShapeDtypeStruct((M, N), jnp.int32),
        jax.ShapeDtypeStruct(x.shape, x.dtype),
    )
    out, x_out = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b, x), out_shapes, ()
    )(a, b, x)
    np.testing.assert_array_equal(
        out, a.astype(np.int32) @ b.astype(np.int32).T)
    np.testing.assert_array_equal(x_out, x)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
