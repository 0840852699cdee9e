"""FP8 (e4m3 activations x e5m2 gradients) WGMMA test.

Pinned environment: jax==0.10.2, jaxlib==0.10.2 (Python 3.11 image).
"""

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
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp
import numpy as np

assert jax.__version__.startswith("0.10."), jax.__version__


class Fp8BackwardTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.product(m=(64, 128), n=(64, 128))
  def test_dgrad_fp8(self, m, n):
    swizzle, nk_tile = 128, 128
    k = 2 * nk_tile
    lhs_dtype, rhs_dtype = jnp.float8_e4m3fn, jnp.float8_e5m2

    def kernel(ctx, lhs, rhs, out, scratch):
      lhs_smem, rhs_smem, barriers = scratch
      ctx.async_copy(
          src_ref=lhs, dst_ref=lhs_smem, swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, nk_tile)),
          barrier=barriers[0],
      )
      ctx.async_copy(
          src_ref=rhs, dst_ref=rhs_smem, swizzle=swizzle,
          gmem_transform=(
              mgpu.TileTransform((8, nk_tile)),
              mgpu.TransposeTransform((1, 0, 2, 3)),
          ),
          barrier=barriers[1],
      )
      barriers[0].wait()
      barriers[1].wait()
      acc = mgpu.WGMMAAccumulator.zero(m=m, n=n, dtype=ir.F32Type.get())
      acc = mgpu.wgmma(
          acc, lhs_smem, memref_transpose(rhs_smem, (0, 1, 3, 2)),
          swizzle=swizzle,
      )
      nvvm.wgmma_commit_group_sync_aligned()
      nvvm.wgmma_wait_group_sync_aligned(0)
      acc.value.store_untiled(out, optimized=False)

    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (m, k)).astype(lhs_dtype)
    y = rng.uniform(-1, 1, (n, k)).astype(rhs_dtype)
    rhs_tiled = tile_shape((n, k), (8, nk_tile))
    scratch = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), lhs_dtype),
        jax.ShapeDtypeStruct((rhs_tiled[1], rhs_tiled[0], *rhs_tiled[2:]), rhs_dtype),
        mgpu.TMABarrier(2),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.float32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch
    )(x, y)
    ref = x.astype(np.float32) @ y.T.astype(np.float32)
    np.testing.assert_allclose(z, ref, atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
