"""Block-scaled e4m3 MMA test where only the activations carry MX scales.

The weights are pre-dequantized offline, so the test only stages A's scales.
"""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu import tcgen05
from jax.experimental.mosaic.gpu.utils import tile_shape
import jax.numpy as jnp
import numpy as np


class ActScaledMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not any(map(jtu.is_cuda_compute_capability_equal, ("10.0", "10.1", "11.0"))):
      self.skipTest("tcgen05 needs sm_100a/sm_101a/sm_110a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.prng = np.random.default_rng(9)

  @parameterized.product(n=(64, 128, 256))
  def test_act_scaled(self, n):
    m, block_size = 128, 32
    in_dtype, scale_dtype = jnp.float8_e4m3fn, jnp.float8_e8m0fnu
    swizzle = 128
    swizzle_elems = swizzle
    k = 2 * swizzle_elems

    def kernel(ctx, lhs, rhs, lhs_scales_gmem, out, scratch):
      (lhs_smem, rhs_smem, lhs_scales_smem, barriers, mma_barrier, acc,
       lhs_scales) = scratch
      ctx.async_copy(
          src_ref=lhs, dst_ref=lhs_smem, swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, swizzle_elems)),
          barrier=barriers[0],
      )
      ctx.async_copy(
          src_ref=rhs, dst_ref=rhs_smem, swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, swizzle_elems)),
          barrier=barriers[1],
      )
      ctx.async_copy(
          src_ref=lhs_scales_gmem, dst_ref=lhs_scales_smem, barrier=barriers[2]
      )
      for i in range(3):
        barriers[i].wait()
      with mgpu.single_thread():
        tcgen05.async_copy_scales_smem_to_tmem(lhs_scales_smem, lhs_scales)
        tcgen05.mma(
            acc,
            lhs_smem,
            mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
            a_swizzle=swizzle,
            b_swizzle=swizzle,
            a_scale=lhs_scales,
            accumulate=False,
        )
        tcgen05.commit_arrive(mma_barrier)
      mma_barrier.wait(orders_tensor_core=True)
      acc.load().store_untiled(out, optimized=False)

    x = self.prng.uniform(-1, 1, (m, k)).astype(in_dtype)
    y = self.prng.uniform(-1, 1, (n, k)).astype(in_dtype)
    x_scales = np.ones((m // 128, k // (block_size * 4), 32, 16), scale_dtype)
    scratch_shape = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle_elems)), in_dtype),
        jax.ShapeDtypeStruct(tile_shape((n, k), (8, swizzle_elems)), in_dtype),
        jax.ShapeDtypeStruct(x_scales.shape, scale_dtype),
        mgpu.TMABarrier(3),
        mgpu.Barrier(1),
        mgpu.TMEM((m, n), jnp.float32),
        mgpu.TMEM((m, k // block_size), scale_dtype,
                  layout=tcgen05.scales_layout()),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.float32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y, x_scales), out_shape,
        scratch_shape,
    )(x, y, x_scales)
    ref = x.astype(np.float32) @ y.T.astype(np.float32)
    np.testing.assert_allclose(z, ref, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
