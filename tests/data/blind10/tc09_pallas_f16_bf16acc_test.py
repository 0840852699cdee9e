"""Pallas tcgen05 f16 GEMM keeping the accumulator in bf16 TMEM."""

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


class F16Bf16AccTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("10.0"):
      self.skipTest("Needs a Blackwell GPU")

  @parameterized.product(m=(128,), n=(128, 256))
  def test_f16_bf16_acc(self, m, n):
    k = 128

    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, out_smem, acc_tmem,
               tma_barrier, mma_barrier):
      plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
      plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
      plgpu.barrier_wait(tma_barrier)
      plgpu.tcgen05_mma(
          acc_tmem,
          a_smem,
          plgpu.transpose_ref(b_smem, (1, 0)),
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
        out_type=jax.ShapeDtypeStruct((m, n), jnp.bfloat16),
        scratch_types=[
            plgpu.SMEM((m, k), jnp.float16, transforms=_transforms(jnp.float16)),
            plgpu.SMEM((n, k), jnp.float16, transforms=_transforms(jnp.float16)),
            plgpu.SMEM((m, n), jnp.bfloat16),
            plgpu.TMEM((m, n), jnp.bfloat16, packed=False),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )
    x = jax.random.uniform(jax.random.key(0), (m, k), jnp.float32, -1, 1).astype(jnp.float16)
    y = jax.random.uniform(jax.random.key(1), (n, k), jnp.float32, -1, 1).astype(jnp.float16)
    res = f(x, y)
    np.testing.assert_allclose(res.astype(jnp.float32), x.astype(jnp.float32) @ y.T.astype(jnp.float32), atol=2e-2, rtol=2e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
