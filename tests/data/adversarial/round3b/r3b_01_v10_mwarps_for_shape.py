"""Warp-level MMA tests written against jax 0.10.2.

Exercises narrower warp tilings for skinny problems. NOTE: this file is
pinned to jax 0.10 in CI.
"""
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


class WarpMmaTilingTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Needs a Hopper GPU")
    self.prng = np.random.default_rng(1234)

  def test_m_warps_2_f16(self):
    # Two warps along M and two along N: 32x16 accumulator tiles.
    m, n, k = 64, 64, 64
    dtype = jnp.float16

    def kernel(ctx, acc, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=2)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, optimized=False
      )
      b_t = utils.memref_transpose(b, (1, 0))
      b_fa = mgpu.FragmentedArray.load_untiled(
          b_t, layout=layouts.rhs, optimized=False
      )
      acc_fa = mgpu.FragmentedArray.load_untiled(
          acc, layout=layouts.acc, optimized=False
      )
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    acc = self.prng.uniform(-1, 1, (m, n)).astype(jnp.float32)
    expected = acc + a.astype(jnp.float32) @ b.astype(jnp.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    np.testing.assert_allclose(result, expected, atol=1e-3)

  def test_for_shape_bf16(self):
    # Let Mosaic pick the warp split for a 32x128 output.
    m, n, k = 32, 128, 64
    dtype = jnp.bfloat16
    bf16 = ir.BF16Type.get()
    f32 = ir.F32Type.get()

    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts.for_shape(bf16, m, n)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      zero = arith.constant(f32, 0.0)
      acc = mgpu.FragmentedArray.splat(zero, (m, n), layout=layouts.acc)
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(jnp.float32) @ b.astype(jnp.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-3)

  def test_int8_default_tiling(self):
    m, n, k = 128, 64, 64
    i8 = ir.IntegerType.get_signless(8)
    i32 = ir.IntegerType.get_signless(32)

    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(i8)
      # int8 operands: signedness has to be spelled out for integer refs.
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=layouts.rhs,
          is_signed=True,
          optimized=False,
      )
      acc = mgpu.FragmentedArray.splat(
          arith.constant(i32, 0), (m, n), layout=layouts.acc, is_signed=True
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self.prng.integers(-128, 128, (m, k)).astype(jnp.int8)
    b = self.prng.integers(-128, 128, (n, k)).astype(jnp.int8)
    expected = a.astype(jnp.int32) @ b.astype(jnp.int32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_array_equal(result, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
