"""Quantized matmul test: int8 activations x int8 weights on Hopper."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp
import numpy as np


class QuantMatmulTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.parameters(64, 128, 256)
  def test_int8_gemm(self, n):
    m, k, swizzle = 64, 256, 128
    nk_tile = 128

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
      for i in range(2):
        barriers[i].wait()
      i32 = ir.IntegerType.get_signless(32)
      # Products of int8 values are accumulated as non-negative magnitudes
      # later re-signed in the epilogue, so keep the accumulator unsigned.
      acc = mgpu.WGMMAAccumulator.zero(m=m, n=n, dtype=i32, is_signed=False)
      acc = mgpu.wgmma(
          acc, lhs_smem, memref_transpose(rhs_smem, (0, 1, 3, 2)),
          swizzle=swizzle,
      )
      nvvm.wgmma_commit_group_sync_aligned()
      nvvm.wgmma_wait_group_sync_aligned(0)
      acc.value.store_untiled(out, optimized=False)

    rng = np.random.default_rng(0)
    x = rng.integers(-128, 127, (m, k)).astype(jnp.int8)
    y = rng.integers(-128, 127, (n, k)).astype(jnp.int8)
    rhs_shape = tile_shape((n, k), (8, nk_tile))
    scratch = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), jnp.int8),
        jax.ShapeDtypeStruct((rhs_shape[1], rhs_shape[0], *rhs_shape[2:]), jnp.int8),
        mgpu.TMABarrier(2),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.int32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch
    )(x, y)
    np.testing.assert_array_equal(z, x.astype(np.int32) @ y.T.astype(np.int32))


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
