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
  # Problem size shared by every test in this class. Subclasses may shrink it.
  M = 128
  N = 64
  K = 128

  def _acc_dtype(self, dtype):
    return jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

  def _make_operands(self, dtype, *, max_value=None):
    dtype = jnp.dtype(dtype)
    m, n, k = self.M, self.N, self.K
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      hi = iinfo.max + 1 if max_value is None else max_value
      a = self.prng.integers(iinfo.min, hi, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, hi, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    return a, b

  def _run(self, dtype, a, b):
    dtype = jnp.dtype(dtype)
    if self.is_wg_semantics() and dtype == jnp.uint4:
      # TODO(apaszke): u4 is not plumbed through the MMA op under WG yet.
      self.skipTest("uint4 MMA is not supported under WG semantics")
    acc_dtype = self._acc_dtype(dtype)
    m, k = a.shape
    n = b.shape[0]

    @functools.partial(
        self.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
      )
      lhs = plgpu.load(
          a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
      )
      rhs = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, lhs, rhs)

    return kernel(a, b)

  def _check(self, dtype, res, a, b):
    acc_dtype = self._acc_dtype(dtype)
    ref = jnp.dot(a.astype(acc_dtype), b.T.astype(acc_dtype))
    if jnp.issubdtype(dtype, jnp.integer):
      np.testing.assert_array_equal(res, ref)
    else:
      np.testing.assert_allclose(res, ref, atol=1e-2, rtol=1e-2)

  @parameterized.product(
      dtype=(
          jnp.bfloat16,
          jnp.float16,
          jnp.float8_e4m3fn,
          jnp.float8_e5m2,
          jnp.int8,
          jnp.int4,
      ),
  )
  def test_mma(self, dtype):
    a, b = self._make_operands(dtype)
    self._check(dtype, self._run(dtype, a, b), a, b)

  @parameterized.product(
      dtype=(jnp.uint8, jnp.uint4),
      small_values=(False, True),
  )
  def test_mma_unsigned(self, dtype, small_values):
    # Full-range unsigned inputs exercise the u8/u4 PTX operand types.
    a, b = self._make_operands(dtype, max_value=8 if small_values else None)
    self._check(dtype, self._run(dtype, a, b), a, b)

  def test_mma_mismatched_acc_dtype(self):
    m, n, k = self.M, self.N, self.K

    @functools.partial(
        self.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(jnp.int8)
      )
      lhs = plgpu.load(
          a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8), optimized=False
      )
      rhs = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8), optimized=False
      )
      with self.assertRaisesRegex(
          NotImplementedError, "Only int32 accumulator supported"
      ):
        plgpu.mma(acc, lhs, rhs)
      o_ref[...] = acc

    a, b = self._make_operands(jnp.int8)
    kernel(a, b)


class PallasMmaWGTest(
    PallasMmaTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
