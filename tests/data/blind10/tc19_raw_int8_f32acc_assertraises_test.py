"""Negative tests for tcgen05 accumulator validation."""

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


class Tcgen05AccErrorTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not any(map(jtu.is_cuda_compute_capability_equal, ("10.0", "10.1", "11.0"))):
      self.skipTest("tcgen05 needs sm_100a/sm_101a/sm_110a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.parameters(jnp.float32, jnp.float16)
  def test_int8_requires_s32_acc(self, acc_dtype):
    m, n, k, swizzle = 128, 128, 256, 128

    def kernel(ctx, lhs, rhs, out, scratch):
      del ctx, lhs, rhs, out
      lhs_smem, rhs_smem, acc = scratch
      with mgpu.single_thread():
        with self.assertRaisesRegex(
            ValueError, "only supports s32 accumulators"
        ):
          tcgen05.mma(
              acc, lhs_smem, mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
              a_swizzle=swizzle, b_swizzle=swizzle, accumulate=False,
          )

    lhs = jax.ShapeDtypeStruct((m, k), jnp.int8)
    rhs = jax.ShapeDtypeStruct((n, k), jnp.int8)
    scratch = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle)), jnp.int8),
        jax.ShapeDtypeStruct(tile_shape((n, k), (8, swizzle)), jnp.int8),
        mgpu.TMEM((m, n), acc_dtype),
    ]
    mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (lhs, rhs),
        jax.ShapeDtypeStruct((m, n), acc_dtype), scratch,
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
