"""W8A8 GEMM test on Hopper, weights stored (K, N) as exported by the converter."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import tile_shape
import jax.numpy as jnp
import numpy as np


class W8A8Test(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.prng = np.random.default_rng(7)

  @parameterized.product(m=(64, 128), n=(128, 256))
  def test_w8a8(self, m, n):
    swizzle = 128
    nk_tile = 128
    k = 2 * nk_tile

    def kernel(ctx, lhs, rhs, out, scratch):
      lhs_smem, rhs_smem, barriers = scratch
      ctx.async_copy(
          src_ref=lhs, dst_ref=lhs_smem, swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, nk_tile)),
          barrier=barriers[0],
      )
      ctx.async_copy(
          src_ref=rhs, dst_ref=rhs_smem, swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, nk_tile)),
          barrier=barriers[1],
      )
      barriers[0].wait()
      barriers[1].wait()
      acc = mgpu.WGMMAAccumulator.zero(
          m=m, n=n, dtype=ir.IntegerType.get_signless(32), is_signed=True
      )
      acc = mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=swizzle)
      nvvm.wgmma_commit_group_sync_aligned()
      nvvm.wgmma_wait_group_sync_aligned(0)
      acc.value.store_untiled(out, optimized=False)

    x = self.prng.integers(-128, 127, (m, k)).astype(jnp.int8)
    w = self.prng.integers(-128, 127, (k, n)).astype(jnp.int8)
    scratch = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), jnp.int8),
        jax.ShapeDtypeStruct(tile_shape((k, n), (8, nk_tile)), jnp.int8),
        mgpu.TMABarrier(2),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.int32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, w), out_shape, scratch
    )(x, w)
    np.testing.assert_array_equal(z, x.astype(np.int32) @ w.astype(np.int32))


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
