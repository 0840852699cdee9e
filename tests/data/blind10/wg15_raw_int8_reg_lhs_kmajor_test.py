"""Int8 WGMMA with the LHS held in registers and a K-major RHS in SMEM."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp
import numpy as np


class RegLhsInt8Test(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.prng = np.random.default_rng(42)

  @parameterized.product(n=(64, 128, 256), swizzle=(64, 128))
  def test_int8_reg_lhs(self, n, swizzle):
    m = 64
    dtype = jnp.int8
    nk_tile = swizzle
    k = 2 * nk_tile

    def kernel(ctx, lhs, rhs, out, scratch):
      rhs_smem, barrier = scratch
      ctx.async_copy(
          src_ref=rhs, dst_ref=rhs_smem, swizzle=swizzle,
          gmem_transform=(
              mgpu.TileTransform((8, nk_tile)),
              mgpu.TransposeTransform((1, 0, 2, 3)),
          ),
          barrier=barrier,
      )
      barrier.wait()
      init_acc = mgpu.WGMMAAccumulator.zero(
          m=m, n=n, dtype=utils.dtype_to_ir_type(jnp.int32), is_signed=True
      )
      lhs_regs = fa.FragmentedArray.load_untiled(
          lhs, layout=fa.WGMMA_LAYOUT_8BIT, optimized=False,
          is_signed=utils.is_signed(dtype),
      )
      rhs_smem = memref_transpose(rhs_smem, (0, 1, 3, 2))
      acc = mgpu.wgmma(init_acc, lhs_regs, rhs_smem, swizzle=swizzle)
      nvvm.wgmma_commit_group_sync_aligned()
      nvvm.wgmma_wait_group_sync_aligned(0)
      acc.value.store_untiled(out, optimized=False)

    x = self.prng.integers(-128, 127, (m, k), dtype=dtype)
    y = self.prng.integers(-128, 127, (n, k), dtype=dtype)
    rhs_tiled = tile_shape((n, k), (8, nk_tile))
    scratch = [
        jax.ShapeDtypeStruct((rhs_tiled[1], rhs_tiled[0], *rhs_tiled[2:]), dtype),
        mgpu.TMABarrier(),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.int32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch
    )(x, y)
    np.testing.assert_array_equal(z, x.astype(np.int32) @ y.T.astype(np.int32))


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
