"""Pallas Mosaic GPU integer WGMMA tests (popcount-style similarity)."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class IntegerWGMMATest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")

  def _transforms(self, dtype, swizzle=128):
    swizzle_elems = swizzle // jnp.dtype(dtype).itemsize
    return (
        plgpu.TilingTransform((8, swizzle_elems)),
        plgpu.SwizzleTransform(swizzle),
    )

  @parameterized.parameters((64, 64), (64, 128), (128, 128))
  def test_similarity(self, m, n):
    k = 256
    acc_dtype = jnp.uint32  # similarity scores are never negative

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

    a = jax.random.randint(jax.random.key(0), (m, k), -8, 8, dtype=jnp.int8)
    b = jax.random.randint(jax.random.key(1), (n, k), -8, 8, dtype=jnp.int8)
    transforms = self._transforms(jnp.int8)
    res = plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
        scratch_types=[
            plgpu.SMEM((m, k), jnp.int8, transforms=transforms),
            plgpu.SMEM((n, k), jnp.int8, transforms=transforms),
            plgpu.SMEM((m, n), acc_dtype),
            plgpu.Barrier(num_arrivals=2),
        ],
    )(a, b)
    expected = (a.astype(jnp.int32) @ b.T.astype(jnp.int32)).astype(acc_dtype)
    np.testing.assert_array_equal(res, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
