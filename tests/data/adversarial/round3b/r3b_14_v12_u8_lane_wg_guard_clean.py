"""Pallas warp-MMA integer tests under both lowering semantics (jax 0.12).

Mirrors the jax test-suite layout: a metaclass injects LOWERING_SEMANTICS
(Lane unless a subclass asks for Warpgroup).
"""
import dataclasses
import functools
from typing import ClassVar

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class _SemanticsMeta(parameterized.TestGeneratorMetaclass):

  def __new__(mcs, *args, lowering_semantics=plgpu.LoweringSemantics.Lane):
    cls = super().__new__(mcs, *args)
    cls.LOWERING_SEMANTICS = lowering_semantics
    return cls


class MmaIntegerTest(jtu.JaxTestCase, metaclass=_SemanticsMeta):
  LOWERING_SEMANTICS: ClassVar[plgpu.LoweringSemantics]

  def setUp(self):
    super().setUp()
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Needs sm_90")

  def kernel(self, *args, **kwargs):
    compiler_params = dataclasses.replace(
        kwargs.pop("compiler_params", plgpu.CompilerParams()),
        lowering_semantics=self.LOWERING_SEMANTICS,
    )
    return plgpu.kernel(*args, compiler_params=compiler_params, **kwargs)

  @parameterized.parameters(jnp.int8, jnp.uint8, jnp.int4)
  def test_mma(self, dtype):
    if (
        dtype == jnp.uint8
        and self.LOWERING_SEMANTICS == plgpu.LoweringSemantics.Warpgroup
    ):
      self.skipTest("Warpgroup lowering treats uint8 MMA operands as int8")
    m, n, k = 128, 64, 128
    dtype = jnp.dtype(dtype)

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.int32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.int32), plgpu.Layout.MMA_ACC(dtype)
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    info = jnp.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max + 1, (m, k)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
    ref = a.astype(np.int32) @ b.astype(np.int32).T
    np.testing.assert_array_equal(kernel(a, b), ref)


class MmaIntegerWGTest(
    MmaIntegerTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
