# Copyright 2025 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Warp-level MMA tests for Pallas Mosaic GPU (excerpt)."""

import dataclasses
import functools
import types
from typing import ClassVar, TYPE_CHECKING

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.pallas import mosaic_gpu as _plgpu
import jax.numpy as jnp
import numpy as np

jax.config.parse_flags_with_absl()


# We don't want the user to call plgpu.kernel directly, so we monkey patch
# it in `plgpu`.
def do_not_call_me_directly(*args, **kwargs):
  raise RuntimeError("Use self.kernel instead of plgpu.kernel.")

if TYPE_CHECKING:
  plgpu = _plgpu
else:
  plgpu = types.ModuleType("_plgpu_local")
  plgpu.__dict__.update(_plgpu.__dict__)

  _kernel = _plgpu.kernel
  del _plgpu

  plgpu.kernel = do_not_call_me_directly


class PallasTestMetaclass(parameterized.TestGeneratorMetaclass):

  def __new__(mcs, *args, lowering_semantics=plgpu.LoweringSemantics.Lane):
    cls = super().__new__(mcs, *args)
    cls.LOWERING_SEMANTICS = lowering_semantics
    return cls


class PallasTest(jtu.JaxTestCase, metaclass=PallasTestMetaclass):
  LOWERING_SEMANTICS: ClassVar[plgpu.LoweringSemantics]

  def setUp(
      self, *, artificial_shared_memory_limit=jtu._SMEM_SIZE_BOUND_FOR_TESTS
  ):
    if jtu.test_device_matches(["rocm"]):
      self.skipTest("Mosaic GPU is not supported on ROCm.")
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Only works on a GPU with capability >= sm90")
    super().setUp()
    self.prng = np.random.default_rng(1234)
    self.enter_context(
        mgpu.core.artificial_shared_memory_limit(artificial_shared_memory_limit)
    )

  def is_wg_semantics(self):
    return self.LOWERING_SEMANTICS == plgpu.LoweringSemantics.Warpgroup

  def skip_if_wg_semantics(self):
    if self.is_wg_semantics():
      self.skipTest("Not supported under WG semantics")

  def kernel(self, *args, **kwargs):
    compiler_params = dataclasses.replace(
        kwargs.pop("compiler_params", plgpu.CompilerParams()),
        lowering_semantics=self.LOWERING_SEMANTICS,
    )
    return _kernel(*args, compiler_params=compiler_params, **kwargs)


class PallasWarpMmaTest(PallasTest):
  DTYPES = (jnp.bfloat16, jnp.float16, jnp.int8, jnp.uint8, jnp.int4, jnp.uint4)

  def _acc_dtype(self, dtype):
    return jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

  def _make_operands(self, dtype, m, n, k):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    return a, b

  def _maybe_skip(self, dtype, m_warps):
    if jnp.issubdtype(dtype, jnp.integer) and jnp.iinfo(dtype).min == 0:
      # TODO(slebedev): Support unsigned int types under WG semantics.
      self.skip_if_wg_semantics()
    if m_warps != 4:
      # Under WG the MMA layouts are inferred and explicit m_warps is ignored.
      self.skip_if_wg_semantics()

  def _run(self, dtype, a, b, m_warps, acc_dtype=None):
    m, k = a.shape
    n = b.shape[0]
    acc_dtype = self._acc_dtype(dtype) if acc_dtype is None else acc_dtype
    layout_kwargs = dict(m_warps=m_warps)

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), acc_dtype)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), acc_dtype),
          plgpu.Layout.MMA_ACC(dtype, **layout_kwargs),
      )
      lhs = plgpu.load(
          a_ref,
          layout=plgpu.Layout.MMA_LHS(dtype, **layout_kwargs),
          optimized=False,
      )
      rhs = plgpu.load(
          b_ref.T,
          layout=plgpu.Layout.MMA_RHS(dtype, **layout_kwargs),
          optimized=False,
      )
      o_ref[...] = plgpu.mma(acc, lhs, rhs)

    return kernel(a, b)

  @parameterized.product(
      dtype=DTYPES,
      m_warps=(1, 2, 4),
      n=(32, 64),
      m=(64, 128),
  )
  def test_mma_m_warps(self, dtype, m_warps, n, m):
    dtype = jnp.dtype(dtype)
    self._maybe_skip(dtype, m_warps)
    k = 128
    a, b = self._make_operands(dtype, m, n, k)
    acc_dtype = self._acc_dtype(dtype)
    res = self._run(dtype, a, b, m_warps)
    ref = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    if jnp.issubdtype(dtype, jnp.integer):
      np.testing.assert_array_equal(res, ref)
    else:
      np.testing.assert_allclose(res, ref, atol=1e-2, rtol=1e-2)

  @parameterized.product(dtype=(jnp.float16, jnp.bfloat16), m_warps=(2, 4))
  def test_mma_half_acc_is_rejected(self, dtype, m_warps):
    # The abstract eval accepts an f16 accumulator; the Mosaic GPU lowering
    # does not.
    self.skip_if_wg_semantics()
    a, b = self._make_operands(dtype, 128, 64, 128)
    with self.assertRaisesRegex(
        NotImplementedError, "Only f32 accumulator supported"
    ):
      self._run(dtype, a, b, m_warps, acc_dtype=jnp.float16)


class PallasWarpMmaWGTest(
    PallasWarpMmaTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
