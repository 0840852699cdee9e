"""Int8 GEMM smoke test for the raw Mosaic GPU WGMMA path."""

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


class Int8WGMMATest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.prng = np.random.default_rng(1234)

  @parameterized.product(m=(64, 128), n=(64, 128), k_steps=(1, 2))
  def test_int8_matmul(self, m, n, k_steps):
    swizzle = 128
    nk_tile = swizzle  # 1 byte per element
    k = nk_tile * k_steps
    in_dtype = jnp.int8
    out_dtype = jnp.float32  # dequantized afterwards

    def kernel(ctx, lhs, rhs, out, scratch):
      lhs_smem, rhs_smem, barriers = scratch
      ctx.async_copy(
          src_ref=lhs,
          dst_ref=lhs_smem,
          swizzle=swizzle,
          gmem_transform=mgpu.TileTransform((8, nk_tile)),
          barrier=barriers[0],
      )
      ctx.async_copy(
          src_ref=rhs,
          dst_ref=rhs_smem,
          swizzle=swizzle,
          gmem_transform=(
              mgpu.TileTransform((8, nk_tile)),
              mgpu.TransposeTransform((1, 0, 2, 3)),
          ),
          barrier=barriers[1],
      )
      barriers[0].wait()
      barriers[1].wait()
      acc = mgpu.WGMMAAccumulator.zero(
          m=m, n=n, dtype=utils.dtype_to_ir_type(out_dtype)
      )
      rhs_smem = memref_transpose(rhs_smem, (0, 1, 3, 2))
      acc = mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=swizzle)
      nvvm.wgmma_commit_group_sync_aligned()
      nvvm.wgmma_wait_group_sync_aligned(0)
      acc.value.store_untiled(out, optimized=False)

    x = self.prng.integers(-128, 127, (m, k)).astype(in_dtype)
    y = self.prng.integers(-128, 127, (n, k)).astype(in_dtype)
    rhs_smem_shape = tile_shape((n, k), (8, nk_tile))
    rhs_smem_shape = (rhs_smem_shape[1], rhs_smem_shape[0], *rhs_smem_shape[2:])
    scratch_shape = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), in_dtype),
        jax.ShapeDtypeStruct(rhs_smem_shape, in_dtype),
        mgpu.TMABarrier(2),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), out_dtype)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch_shape
    )(x, y)
    ref = x.astype(np.float32) @ y.T.astype(np.float32)
    np.testing.assert_array_equal(z, ref)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
