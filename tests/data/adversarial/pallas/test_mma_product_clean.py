# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Warp-level MMA tests for Pallas Mosaic GPU, run under both semantics."""

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

jax.config.parse_flags_with_absl()


class PallasTestMetaclass(parameterized.TestGeneratorMetaclass):

  def __new__(mcs, *args, lowering_semantics=plgpu.LoweringSemantics.Lane):
    cls = super().__new__(mcs, *args)
    cls.LOWERING_SEMANTICS = lowering_semantics
    return cls


class PallasTest(jtu.JaxTestCase, metaclass=PallasTestMetaclass):
  LOWERING_SEMANTICS: ClassVar[plgpu.LoweringSemantics]

  def setUp(self):
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Only works on a GPU with capability >= sm90")
    super().setUp()

  def kernel(self, *args, **kwargs):
    compiler_params = dataclasses.replace(
        kwargs.pop("compiler_params", plgpu.CompilerParams()),
        lowering_semantics=self.LOWERING_SEMANTICS,
    )
    return plgpu.kernel(*args, compiler_params=compiler_params, **kwargs)


class WarpMmaTest(PallasTest):

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8, jnp.int4),
      n=(8, 64),
  )
  def test_mma(self, dtype, n):
    m = k = 128
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32

    @functools.partial(
        self.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
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

    prng = np.random.default_rng(0)
    if is_integer:
      iinfo = jnp.iinfo(dtype)
      a = prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = prng.uniform(-1, 1, (n, k)).astype(dtype)

    res = kernel(a, b)
    ref = jnp.dot(a.astype(acc_dtype), b.T.astype(acc_dtype))
    if is_integer:
      np.testing.assert_array_equal(res, ref)
    else:
      np.testing.assert_allclose(res, ref, atol=1e-2, rtol=1e-2)

  def test_mma_accumulates_onto_ones(self):
    # The accumulator is seeded with ones and cast to the WGMMA register
    # layout, which is the same TiledLayout as the m_warps=4 MMA accumulator.
    m, n, k = 64, 64, 64
    dtype = jnp.float16

    @functools.partial(
        self.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.ones((m, n), jnp.float32), plgpu.Layout.WGMMA
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    a = jnp.full((m, k), 0.5, dtype)
    b = jnp.full((n, k), 0.25, dtype)
    np.testing.assert_allclose(kernel(a, b), 1.0 + k * 0.125, rtol=1e-3)


class WarpMmaWGTest(
    WarpMmaTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
