"""Pallas Mosaic GPU WGMMA dtype x accumulator sweep."""

import itertools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


_IN_DTYPES = (
    jnp.float16, jnp.bfloat16, jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.int8,
)
_ACC_DTYPES = (jnp.float32, jnp.float16, jnp.int32)


class WGMMASweepTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")

  @parameterized.parameters(*itertools.product(_IN_DTYPES, _ACC_DTYPES))
  def test_wgmma_sweep(self, in_dtype, acc_dtype):
    is_int = jnp.issubdtype(in_dtype, jnp.integer)
    if is_int != (acc_dtype == jnp.int32):
      self.skipTest("int8 needs an int32 accumulator and vice versa")
    if acc_dtype == jnp.float16 and in_dtype == jnp.bfloat16:
      self.skipTest("bf16 WGMMA only accumulates in f32")
    m, n, k = 64, 128, 256
    swizzle = 128
    elems = swizzle // jnp.dtype(in_dtype).itemsize
    transforms = (
        plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle)
    )

    def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
      plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
      plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
      plgpu.barrier_wait(barrier)

      def scope(acc_ref):
        plgpu.wgmma(acc_ref, a_smem, b_smem.T)
        return acc_ref[...]

      o_smem[...] = pl.run_scoped(scope, plgpu.ACC((m, n), acc_dtype))
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(o_smem, o_gmem)
      plgpu.wait_smem_to_gmem(0)

    if is_int:
      a = jax.random.randint(jax.random.key(0), (m, k), -8, 8, dtype=in_dtype)
      b = jax.random.randint(jax.random.key(1), (n, k), -8, 8, dtype=in_dtype)
    else:
      a = jax.random.uniform(jax.random.key(0), (m, k)).astype(in_dtype)
      b = jax.random.uniform(jax.random.key(1), (n, k)).astype(in_dtype)
    out = plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
        scratch_types=[
            plgpu.SMEM((m, k), in_dtype, transforms=transforms),
            plgpu.SMEM((n, k), in_dtype, transforms=transforms),
            plgpu.SMEM((m, n), acc_dtype),
            plgpu.Barrier(num_arrivals=2),
        ],
    )(a, b)
    ref = a.astype(jnp.float32) @ b.T.astype(jnp.float32)
    tol = 5e-2 if acc_dtype == jnp.float16 else 1e-3
    np.testing.assert_allclose(out.astype(jnp.float32), ref, atol=tol, rtol=tol)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
