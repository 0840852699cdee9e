"""Operand/accumulator dtype product for plgpu.mma, filtered by skip guards."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()


class MmaDtypeTest(jtu.JaxTestCase):
  LOWERING_SEMANTICS = plgpu.LoweringSemantics.Lane

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("8.0"):
      self.skipTest("Only works on a GPU with capability >= sm80")

  def is_wg_semantics(self):
    return self.LOWERING_SEMANTICS == plgpu.LoweringSemantics.Warpgroup

  def kernel(self, body, **kwargs):
    return plgpu.kernel(
        body,
        compiler_params=plgpu.CompilerParams(
            lowering_semantics=self.LOWERING_SEMANTICS
        ),
        **kwargs,
    )

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8, jnp.uint8, jnp.int4),
      acc_dtype=(jnp.float32, jnp.float16, jnp.int32),
  )
  def test_mma_dtypes(self, dtype, acc_dtype):
    dtype, acc_dtype = jnp.dtype(dtype), jnp.dtype(acc_dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    if is_integer and acc_dtype != jnp.int32:
      self.skipTest("Integer operands need an int32 accumulator.")
    if not is_integer and acc_dtype != jnp.float32:
      self.skipTest("Only f32 accumulators lower for floating operands.")
    if self.is_wg_semantics() and jnp.issubdtype(dtype, jnp.unsignedinteger):
      self.skipTest("WG lowering treats unsigned operands as signed.")
    m, n, k = 128, 64, 128

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), acc_dtype)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    rng = np.random.default_rng(0)
    if is_integer:
      info = jnp.iinfo(dtype)
      a = rng.integers(info.min, info.max + 1, (m, k)).astype(dtype)
      b = rng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
      ref = a.astype(np.int32) @ b.T.astype(np.int32)
      np.testing.assert_array_equal(kernel(a, b), ref)
    else:
      a = rng.uniform(-1, 1, (m, k)).astype(dtype)
      b = rng.uniform(-1, 1, (n, k)).astype(dtype)
      ref = a.astype(np.float32) @ b.T.astype(np.float32)
      np.testing.assert_allclose(kernel(a, b), ref, atol=1e-2, rtol=1e-2)

  def test_f16_operands_f32_acc(self):
    m, n, k = 64, 8, 32

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.full((m, n), 1.0, jnp.float32),
          plgpu.Layout.MMA_ACC(jnp.float16),
      )
      a = plgpu.load(
          a_ref, layout=plgpu.Layout.MMA_LHS(jnp.float16), optimized=False
      )
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float16), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    a = jnp.ones((m, k), jnp.float16)
    b = jnp.ones((n, k), jnp.float16)
    np.testing.assert_allclose(kernel(a, b), np.full((m, n), k + 1.0))

  def test_int8_with_float_acc_is_rejected(self):
    m, n, k = 64, 8, 32
    with self.assertRaisesRegex(
        NotImplementedError, "Only int32 accumulator supported"
    ):

      @functools.partial(
          self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
      )
      def kernel(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(
            jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(jnp.int8)
        )
        a = plgpu.load(
            a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8), optimized=False
        )
        b = plgpu.load(
            b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8), optimized=False
        )
        o_ref[...] = plgpu.mma(acc, a, b)

      kernel(jnp.ones((m, k), jnp.int8), jnp.ones((n, k), jnp.int8))


class MmaDtypeWGTest(MmaDtypeTest):
  LOWERING_SEMANTICS = plgpu.LoweringSemantics.Warpgroup


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
