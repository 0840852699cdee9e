"""FP64 warp MMA on Hopper (jax 0.12, sm_90a)."""
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

jax.config.update("jax_enable_x64", True)


class F64WarpMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("f64 m16n8k8 needs sm_90")

  @parameterized.parameters(1, 2, 4)
  def test_f64_mma(self, m_warps):
    m, n, k = 64, 64, 32
    f64 = ir.F64Type.get()

    def kernel(ctx, acc_ref, a_ref, b_ref, out_ref, _):
      del ctx
      layouts = mgpu.MMALayouts(jnp.float64, m_warps=m_warps)
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, optimized=False
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)),
          layout=layouts.rhs,
          optimized=False,
      )
      acc = mgpu.FragmentedArray.load_untiled(
          acc_ref, layout=layouts.acc, optimized=False
      )
      bias = mgpu.FragmentedArray.splat(
          arith.constant(f64, 1.0), (m, n), layout=layouts.acc
      )
      (mgpu.mma(acc, a, b) + bias).store_untiled(out_ref, optimized=False)

    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((n, k))
    acc = rng.standard_normal((m, n))
    expected = acc + a @ b.T + 1.0
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
