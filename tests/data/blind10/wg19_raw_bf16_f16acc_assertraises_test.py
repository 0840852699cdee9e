"""Negative tests: WGMMA must reject accumulators it cannot produce."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu.utils import tile_shape
import jax.numpy as jnp


class WGMMAErrorTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_equal("9.0"):
      self.skipTest("Only works on GPU with capability sm90a")
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def test_bf16_rejects_f16_accumulator(self):
    m, n, k = 64, 64, 64
    swizzle = 128

    def kernel(ctx, lhs, rhs, out, scratch):
      del ctx, lhs, rhs, out
      lhs_smem, rhs_smem = scratch
      acc = mgpu.WGMMAAccumulator.zero(m=m, n=n, dtype=ir.F16Type.get())
      with self.assertRaisesRegex(
          ValueError, "only supports accumulators of type f32"
      ):
        mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=swizzle)

    lhs = jax.ShapeDtypeStruct((m, k), jnp.bfloat16)
    rhs = jax.ShapeDtypeStruct((k, n), jnp.bfloat16)
    scratch = [
        jax.ShapeDtypeStruct(tile_shape((m, k), (8, 64)), jnp.bfloat16),
        jax.ShapeDtypeStruct(tile_shape((k, n), (8, 64)), jnp.bfloat16),
    ]
    mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (lhs, rhs),
        jax.ShapeDtypeStruct((m, n), jnp.float16), scratch,
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
