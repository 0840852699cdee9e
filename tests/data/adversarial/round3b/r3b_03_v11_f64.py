"""Double-precision warp MMA for the iterative-refinement solver (jax 0.11)."""
import functools

from absl.testing import absltest
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def dgemm_tile_kernel(ctx, a, b, out, _, *, m, n):
  """out = a @ b.T for one (m, n) tile, accumulating in f64."""
  del ctx
  f64 = ir.F64Type.get()
  layouts = mgpu.MMALayouts(f64)
  a_fa = mgpu.FragmentedArray.load_untiled(
      a, layout=layouts.lhs, optimized=False
  )
  b_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b, (1, 0)), layout=layouts.rhs, optimized=False
  )
  acc = mgpu.FragmentedArray.splat(
      arith.constant(f64, 0.0), (m, n), layout=layouts.acc
  )
  acc = mgpu.mma(acc, a_fa, b_fa)
  acc.store_untiled(out, optimized=False)


class DgemmTileTest(absltest.TestCase):

  def test_dgemm_tile(self):
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("f64 mma.sync m16n8k8 needs sm_90")
    m, n, k = 128, 64, 32
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((n, k))
    expected = a @ b.T
    kernel = functools.partial(dgemm_tile_kernel, m=m, n=n)
    result = mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (128, 1, 1),
        (a, b),
        jax.ShapeDtypeStruct((m, n), jnp.float64),
        (),
    )(a, b)
    np.testing.assert_allclose(result, expected, rtol=1e-12)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
