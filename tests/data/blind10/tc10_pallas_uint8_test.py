"""Pallas tcgen05 u8 GEMM over full-range image tiles."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


def _transforms(dtype, swizzle=128):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


class U8ImageTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("10.0"):
      self.skipTest("Needs a Blackwell GPU")

  @parameterized.product(m=(128,), n=(128, 256))
  def test_u8_full_range(self, m, n):
    k = 256

    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, out_smem, acc_tmem,
               tma_barrier, mma_barrier):
      plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
      plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
      plgpu.barrier_wait(tma_barrier)
      plgpu.tcgen05_mma(
          acc_tmem,
          a_smem,
          b_smem,
          mma_barrier,
          accumulate=False,
      )
      plgpu.barrier_wait(mma_barrier)
      out_smem[...] = plgpu.async_load_tmem(acc_tmem)
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(out_smem, out_gmem)
      plgpu.wait_smem_to_gmem(0)

    f = plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.int32),
        scratch_types=[
            plgpu.SMEM((m, k), jnp.uint8, transforms=_transforms(jnp.uint8)),
            plgpu.SMEM((k, n), jnp.uint8, transforms=_transforms(jnp.uint8)),
            plgpu.SMEM((m, n), jnp.int32),
            plgpu.TMEM((m, n), jnp.int32, packed=False),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )
    x = jax.random.randint(jax.random.key(0), (m, k), 0, 256, dtype=jnp.int32).astype(jnp.uint8)
    y = jax.random.randint(jax.random.key(1), (k, n), 0, 256, dtype=jnp.int32).astype(jnp.uint8)
    res = f(x, y)
    np.testing.assert_array_equal(res, x.astype(jnp.int32) @ y.astype(jnp.int32))


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
