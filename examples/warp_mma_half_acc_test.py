"""Tests for a warp-level half-precision GEMM-with-accumulate in Mosaic GPU.

out = c + a @ b.T with `mgpu.mma` (`mma.sync.m16n8k16`) for bf16 and f16
operands and every warp split of the 128x128 tile (m_warps = 1, 2, 4). The
accumulator c is loaded from GMEM in the MMA accumulator layout, so the kernel
can be chained across K blocks by the caller.

Run on an sm_80+ GPU:  python warp_mma_half_acc_test.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import absltest, parameterized
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils


class WarpMmaHalfTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if jax.default_backend() != "gpu":
      self.skipTest("needs an NVIDIA GPU (sm_80+)")
    self.prng = np.random.default_rng(1234)
    self.enter_context(mlir.make_ir_context())
    self.enter_context(ir.Location.unknown())

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16),
      m_warps=(1, 2, 4),
  )
  def test_gemm_accumulate(self, dtype, m_warps):
    m, n, k = 128, 128, 128
    # Keep c and out in the input precision, like the rest of the model.
    acc_dtype = dtype

    def kernel(ctx, c, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)), layout=layouts.rhs,
          optimized=False)
      c_fa = mgpu.FragmentedArray.load_untiled(
          c, layout=layouts.acc, optimized=False)
      mgpu.mma(c_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    c = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    expected = (
        c.astype(np.float32)
        + a.astype(np.float32) @ b.astype(np.float32).T
    )
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (c, a, b), c, ()
    )(c, a, b)
    np.testing.assert_allclose(
        np.asarray(result, np.float32), expected, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main()
