"""tcgen05 e4m3 x e5m2 GEMM test.

Pinned environment: jax==0.10.2 (Python 3.11 image)."""

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

assert jax.__version__.startswith("0.10."), jax.__version__


class MixedFp8Test(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not any(map(jtu.is_cuda_compute_capability_equal, ("10.0", "10.1", "11.0"))):
      self.skipTest("tcgen05 needs sm_100a/sm_101a/sm_110a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.prng = np.random.default_rng(2024)

  @parameterized.product(m=(128,), n=(128, 256), k_steps=(2,))
  def test_mixed_fp8(self, m, n, k_steps):
    swizzle = 128
    swizzle_elems = swizzle
    k = swizzle_elems * k_steps

    def kernel(ctx, lhs, rhs, out, scratch):
      lhs_smem, rhs_smem, barriers, mma_barrier, acc = scratch
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
      barriers[0].wait()
      barriers[1].wait()
      with mgpu.single_thread():
        tcgen05.mma(
            acc, lhs_smem, mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
            a_swizzle=swizzle, b_swizzle=swizzle, accumulate=False,
        )
        tcgen05.commit_arrive(mma_barrier)
      mma_barrier.wait(orders_tensor_core=True)
      acc.load().store_untiled(out, optimized=False)

    x = self.prng.uniform(-1, 1, (m, k)).astype(jnp.float8_e4m3fn)
    y = self.prng.uniform(-1, 1, (n, k)).astype(jnp.float8_e5m2)
    scratch_shape = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle_elems)), jnp.float8_e4m3fn),
        jax.ShapeDtypeStruct(tile_shape((n, k), (8, swizzle_elems)), jnp.float8_e5m2),
        mgpu.TMABarrier(2),
        mgpu.Barrier(1),
        mgpu.TMEM((m, n), jnp.float32),
    ]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.float32)
    z = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch_shape
    )(x, y)
    ref = x.astype(np.float32) @ y.T.astype(np.float32)
    np.testing.assert_allclose(z, ref, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
