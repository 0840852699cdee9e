"""Error-path and happy-path tests for integer warp MMA (jax 0.12)."""
from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class IntegerWarpMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Only runs on Hopper")
    self.prng = np.random.default_rng(42)

  def test_invalid_m_warps_is_rejected(self):
    with self.assertRaisesRegex(ValueError, "m_warps must be 1, 2, or 4"):
      mgpu.MMALayouts(jnp.int8, m_warps=3)

  def test_int8_mma(self):
    m, n, k = 128, 64, 64
    i8 = ir.IntegerType.get_signless(8)
    i32 = ir.IntegerType.get_signless(32)
    f32 = ir.F32Type.get()
    a = self.prng.integers(-128, 128, (m, k)).astype(jnp.int8)
    b = self.prng.integers(-128, 128, (n, k)).astype(jnp.int8)
    expected = a.astype(jnp.int32) @ b.astype(jnp.int32).T

    def load_operands(a_ref, b_ref):
      layouts = mgpu.MMALayouts(i8)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, is_signed=True, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)),
          layout=layouts.rhs,
          is_signed=True,
          optimized=False,
      )
      return layouts, a_fa, b_fa

    # A float accumulator must be rejected for integer operands.
    with self.assertRaisesRegex(
        NotImplementedError, "Only s32 accumulator supported"
    ):
      def bad_kernel(ctx, a_ref, b_ref, out, _):
        del ctx
        layouts, a_fa, b_fa = load_operands(a_ref, b_ref)
        acc = mgpu.FragmentedArray.splat(
            arith.constant(f32, 0.0), (m, n), layout=layouts.acc
        )
        mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

      mgpu.as_gpu_kernel(
          bad_kernel, (1, 1, 1), (128, 1, 1), (a, b),
          jax.ShapeDtypeStruct((m, n), jnp.float32), (),
      )(a, b)

    # The real thing: int32 accumulator.
    def kernel(ctx, a_ref, b_ref, out, _):
      del ctx
      layouts, a_fa, b_fa = load_operands(a_ref, b_ref)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(i32, 0), (m, n), layout=layouts.acc, is_signed=False
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_array_equal(result, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
