"""Activation x weight matmuls where the weights come from a checkpoint."""

import functools

from absl.testing import absltest
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

M, N, K = 128, 64, 128
LANE = plgpu.LoweringSemantics.Lane


def _acc(m, n, dtype):
  return plgpu.layout_cast(
      jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
  )


class MixedWeightsTest(jtu.JaxTestCase):

  def test_bf16_activations_f16_weights(self):
    act_dtype, w_dtype = jnp.bfloat16, jnp.float16

    @functools.partial(
        plgpu.kernel,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
        compiler_params=plgpu.CompilerParams(lowering_semantics=LANE),
    )
    def kernel(x_ref, w_ref, o_ref):
      x = plgpu.load(
          x_ref, layout=plgpu.Layout.MMA_LHS(act_dtype), optimized=False
      )
      # Weights are stored as float16 in the checkpoint.
      w = plgpu.load(
          w_ref.T, layout=plgpu.Layout.MMA_RHS(w_dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(_acc(M, N, act_dtype), x, w)

    x = jnp.ones((M, K), act_dtype)
    w = jnp.ones((N, K), w_dtype)
    np.testing.assert_allclose(kernel(x, w), np.full((M, N), K, np.float32))

  def test_reference_precisions(self):
    # Sweep the storage dtype; float32 gives the high-precision reference.
    results = {}
    for dtype in (jnp.bfloat16, jnp.float32):

      def body(x_ref, w_ref, o_ref, dtype=dtype):
        x = plgpu.load(
            x_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
        )
        w = plgpu.load(
            w_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
        )
        o_ref[...] = plgpu.mma(_acc(M, N, dtype), x, w)

      f = plgpu.kernel(
          body,
          out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
          compiler_params=plgpu.CompilerParams(lowering_semantics=LANE),
      )
      results[dtype] = f(jnp.ones((M, K), dtype), jnp.ones((N, K), dtype))
    np.testing.assert_allclose(
        results[jnp.bfloat16], results[jnp.float32], rtol=1e-2
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
