"""Warp MMA: float sweep via jtu.sample_product, plus a GEMM with C input."""

from absl.testing import absltest
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

FLOAT_OPERANDS = [jnp.bfloat16, jnp.float16, jnp.float32]


class WarpMMAFloatTest(jtu.JaxTestCase):

  @jtu.sample_product(
      dtype=FLOAT_OPERANDS,
      shape=[(128, 128, 64), (64, 64, 128)],
  )
  def test_float_mma(self, dtype, shape):
    m, n, k = shape
    acc_dtype = jnp.float32

    def kernel(ctx, a_ref, b_ref, out_ref, scratch):
      del ctx, scratch
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)),
          layout=layouts.rhs,
          optimized=False,
      )
      acc = mgpu.FragmentedArray.splat(
          arith.constant(utils.dtype_to_ir_type(acc_dtype), 0.0),
          (m, n),
          layout=layouts.acc,
      )
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (n, k)).astype(dtype)
    out = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((m, n), acc_dtype), (),
    )(a, b)
    self.assertAllClose(
        out, a.astype(np.float32) @ b.astype(np.float32).T,
        atol=1e-3, rtol=1e-3,
    )

  def test_gemm_with_c(self):
    m, n, k = 128, 64, 64
    dtype = jnp.dtype("bfloat16")

    def kernel(ctx, a_ref, b_ref, c_ref, out_ref, scratch):
      del ctx, scratch
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      c = mgpu.FragmentedArray.load_untiled(
          c_ref, layout=layouts.lhs, optimized=False
      )
      mgpu.mma(c, a, b).store_untiled(out_ref, optimized=False)

    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (n, k)).astype(dtype)
    c = rng.uniform(-1, 1, (m, n)).astype(jnp.float32)
    out = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b, c),
        jax.ShapeDtypeStruct((m, n), jnp.float32), (),
    )(a, b, c)
    self.assertAllClose(
        out, c + a.astype(np.float32) @ b.astype(np.float32).T,
        atol=1e-3, rtol=1e-3,
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
