"""Mixed FP8 (e4m3 x e5m2) WGMMA through Pallas (requires jax >= 0.11)."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class MixedFp8Test(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")

  @parameterized.parameters(
      (jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float32),
      (jnp.float8_e5m2, jnp.float8_e4m3fn, jnp.float16),
  )
  def test_mixed_fp8(self, lhs_dtype, rhs_dtype, acc_dtype):
    m, k, n = 64, 256, 128
    transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

    def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
      plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
      plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
      plgpu.barrier_wait(barrier)

      def scope(acc_ref):
        plgpu.wgmma(acc_ref, a_smem, plgpu.transpose_ref(b_smem, (1, 0)))
        return acc_ref[...]

      o_smem[...] = pl.run_scoped(scope, plgpu.ACC((m, n), acc_dtype))
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(o_smem, o_gmem)
      plgpu.wait_smem_to_gmem(0)

    a = jax.random.uniform(jax.random.key(0), (m, k), jnp.float32, -1, 1)
    b = jax.random.uniform(jax.random.key(1), (n, k), jnp.float32, -1, 1)
    a, b = a.astype(lhs_dtype), b.astype(rhs_dtype)
    res = plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
        scratch_types=[
            plgpu.SMEM((m, k), lhs_dtype, transforms=transforms),
            plgpu.SMEM((n, k), rhs_dtype, transforms=transforms),
            plgpu.SMEM((m, n), acc_dtype),
            plgpu.Barrier(num_arrivals=2),
        ],
    )(a, b)
    ref = a.astype(jnp.float32) @ b.T.astype(jnp.float32)
    np.testing.assert_allclose(res.astype(jnp.float32), ref, atol=5e-2, rtol=5e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
