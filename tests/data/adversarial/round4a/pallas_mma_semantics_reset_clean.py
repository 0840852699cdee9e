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


class PallasMmaTest(PallasTest):

  def _mma(self, m, n, k, dtype):
    dtype = jnp.dtype(dtype)
    acc_dtype = jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

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

    return kernel, acc_dtype

  def _operands(self, m, n, k, dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    return a, b

  def _check_mma(self, m, n, k, dtype):
    kernel, acc_dtype = self._mma(m, n, k, dtype)
    a, b = self._operands(m, n, k, dtype)
    ref = jnp.dot(a.astype(acc_dtype), b.T.astype(acc_dtype))
    if acc_dtype == jnp.int32:
      np.testing.assert_array_equal(kernel(a, b), ref)
    else:
      np.testing.assert_allclose(kernel(a, b), ref, atol=1e-2, rtol=1e-2)

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8, jnp.int4),
      m=(64, 128),
      n=(8, 64),
  )
  def test_mma(self, dtype, m, n):
    self._check_mma(m, n, 128, dtype)


class PallasMmaWGTest(
    PallasMmaTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


class PallasMmaUnsignedTest(PallasMmaWGTest):
  """Unsigned operands.

  Shares the helpers of ``PallasMmaWGTest``.
  """

  @parameterized.product(
      dtype=(jnp.uint8, jnp.uint4),
      m=(64, 128),
      n=(8, 64),
  )
  def test_mma_unsigned(self, dtype, m, n):
    self._check_mma(m, n, 128, dtype)

  def test_mma_unsigned_mixed_with_signed_is_rejected(self):
    m, k, n = 64, 128, 8

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.int32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.int32), plgpu.Layout.MMA_ACC(jnp.uint8)
      )
      a = plgpu.load(
          a_ref, layout=plgpu.Layout.MMA_LHS(jnp.uint8), optimized=False
      )
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8), optimized=False
      )
      with self.assertRaisesRegex(TypeError, "Operand dtypes must match"):
        plgpu.mma(acc, a, b)
      o_ref[...] = acc

    a, _ = self._operands(m, n, k, jnp.uint8)
    _, b = self._operands(m, n, k, jnp.int8)
    kernel(a, b)


class PallasMmaUnsignedLargeTest(PallasMmaUnsignedTest):
  LOWERING_SEMANTICS = plgpu.LoweringSemantics.Warpgroup

  @parameterized.product(
      dtype=(jnp.uint8,),
      k=(256, 512),
  )
  def test_mma_unsigned_large_k(self, dtype, k):
    self._check_mma(128, 64, k, dtype)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
