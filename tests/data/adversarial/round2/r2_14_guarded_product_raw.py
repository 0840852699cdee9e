"""Exhaustive (operand, accumulator, m_warps) product for warp MMA, with guards."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

M, N, K = 128, 128, 128


def _build_kernel(dtype, acc_dtype, m_warps):
  is_integer = jnp.issubdtype(dtype, jnp.integer)

  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
    a = mgpu.FragmentedArray.load_untiled(
        a_ref, layout=layouts.lhs, is_signed=utils.is_signed(dtype),
        optimized=False,
    )
    b = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
        is_signed=utils.is_signed(dtype), optimized=False,
    )
    acc = mgpu.FragmentedArray.splat(
        arith.constant(
            utils.dtype_to_ir_type(acc_dtype), 0 if is_integer else 0.0
        ),
        (M, N),
        layout=layouts.acc,
        is_signed=True if is_integer else None,
    )
    mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

  return kernel


class GuardedProductTest(parameterized.TestCase):

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8, jnp.uint8),
      acc_dtype=(jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32),
      m_warps=(1, 2, 4),
  )
  def test_mma(self, dtype, acc_dtype, m_warps):
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    if is_integer != jnp.issubdtype(acc_dtype, jnp.integer):
      self.skipTest("Integer operands need an integer accumulator and v.v.")
    if acc_dtype in (jnp.float16, jnp.bfloat16):
      self.skipTest("Mosaic GPU mma only accumulates in f32 for floats")
    rng = np.random.default_rng(m_warps)
    if is_integer:
      info = jnp.iinfo(dtype)
      a = rng.integers(info.min, info.max + 1, (M, K)).astype(dtype)
      b = rng.integers(info.min, info.max + 1, (N, K)).astype(dtype)
    else:
      a = rng.uniform(-1, 1, (M, K)).astype(dtype)
      b = rng.uniform(-1, 1, (N, K)).astype(dtype)
    out = mgpu.as_gpu_kernel(
        _build_kernel(dtype, acc_dtype, m_warps),
        (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((M, N), acc_dtype), (),
    )(a, b)
    ref = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    np.testing.assert_allclose(out, ref, atol=1e-5)

  def test_int8_rejects_f32_accumulator(self):
    a = np.ones((M, K), np.int8)
    b = np.ones((N, K), np.int8)
    with self.assertRaisesRegex(
        NotImplementedError, "Only s32 accumulator supported"
    ):

      def bad_kernel(ctx, a_ref, b_ref, out_ref, scratch):
        del ctx, scratch
        layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
        a_fa = mgpu.FragmentedArray.load_untiled(
            a_ref, layout=layouts.lhs, is_signed=True, optimized=False
        )
        b_fa = mgpu.FragmentedArray.load_untiled(
            utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
            is_signed=True, optimized=False,
        )
        acc = mgpu.FragmentedArray.splat(
            arith.constant(utils.dtype_to_ir_type(jnp.float32), 0.0),
            (M, N),
            layout=layouts.acc,
        )
        mgpu.mma(acc, a_fa, b_fa).store_untiled(out_ref, optimized=False)

      mgpu.as_gpu_kernel(
          bad_kernel, (1, 1, 1), (128, 1, 1), (a, b),
          jax.ShapeDtypeStruct((M, N), jnp.float32), (),
      )(a, b)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
