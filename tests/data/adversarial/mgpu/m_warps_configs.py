# Warp-MMA tiles with different warp splits of the M dimension.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


WARPS_PER_WARPGROUP = 4
ROWS_PER_WARP = 16


def _make_kernel(dtype, m, n, m_warps, acc_layout=None):
  def kernel(ctx, a_ref, b_ref, out_ref, _):
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
    a = fa.FragmentedArray.load_untiled(
        a_ref, layout=layouts.lhs, optimized=False
    )
    b = fa.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
        optimized=False,
    )
    acc = fa.FragmentedArray.splat(
        arith.constant(ir.F32Type.get(), 0.0),
        (m, n),
        layout=acc_layout if acc_layout is not None else layouts.acc,
    )
    mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)
  return kernel


class WarpSplitTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(5)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def _check(self, kernel, m, n, k, dtype):
    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((m, n), jnp.float32), (),
    )(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.parameters(64, 32, 48)
  def test_block_m(self, block_m):
    # One warp per 16 rows of the block.
    m_warps = block_m // ROWS_PER_WARP
    n = 8 * (WARPS_PER_WARPGROUP // m_warps) * 4
    k = 64
    kernel = _make_kernel(jnp.bfloat16, block_m, n, m_warps)
    self._check(kernel, block_m, n, k, jnp.bfloat16)

  def test_two_row_warps_with_wgmma_acc(self):
    m, n, k = 128, 128, 64
    kernel = _make_kernel(
        jnp.float16, m, n, m_warps=2, acc_layout=mgpu.WGMMA_LAYOUT
    )
    self._check(kernel, m, n, k, jnp.float16)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
