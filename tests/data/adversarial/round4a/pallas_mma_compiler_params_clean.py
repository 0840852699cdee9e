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


def run_on_sm80(method):
  """A marker that allows a test case to run on Ampere GPUs."""
  method._min_capability = "8.0"
  return method


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
    min_capability = getattr(
        getattr(type(self), self._testMethodName, None),
        "_min_capability",
        "9.0",
    )
    if not jtu.is_cuda_compute_capability_at_least(min_capability):
      self.skipTest(f"Only works on a GPU with capability >= sm{min_capability}")
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


_UNSIGNED = (jnp.dtype(jnp.uint8), jnp.dtype(jnp.uint4))


class PallasMmaIntegerTest(PallasTest):
  # Extra compiler params every kernel in this class is built with.
  COMPILER_PARAMS = plgpu.CompilerParams(unsafe_no_auto_barriers=True)

  def _skip_unsigned_under_wg(self, dtype):
    # TODO(slebedev): Support unsigned int types under WG semantics. The
    # dialect lowering treats every integer operand as signed.
    if self.is_wg_semantics() and jnp.dtype(dtype) in _UNSIGNED:
      self.skipTest("Unsigned MMA operands are not supported under WG.")

  def _make_operands(self, dtype, m, n, k):
    dtype = jnp.dtype(dtype)
    iinfo = jnp.iinfo(dtype)
    a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
    b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    return a, b

  def _run(self, dtype, a, b, *, compiler_params=None):
    m, k = a.shape
    n = b.shape[0]
    if compiler_params is None:
      compiler_params = self.COMPILER_PARAMS

    @functools.partial(
        self.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.int32),
        compiler_params=compiler_params,
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

    return kernel(a, b)

  @parameterized.product(
      dtype=(jnp.int8, jnp.uint8, jnp.int4, jnp.uint4),
      m=(64, 128),
      n=(8, 64),
      k_mult=(1, 2),
  )
  def test_integer_mma(self, dtype, m, n, k_mult):
    self._skip_unsigned_under_wg(dtype)
    a, b = self._make_operands(dtype, m, n, 128 * k_mult)
    np.testing.assert_array_equal(
        self._run(dtype, a, b),
        a.astype(np.int32) @ b.astype(np.int32).T,
    )

  @parameterized.product(
      dtype=(jnp.uint8, jnp.uint4),
      approx_math=(False, True),
  )
  def test_unsigned_mma_compiler_params(self, dtype, approx_math):
    # Compiler params given by the test are merged with the class' lowering
    # semantics by ``self.kernel``.
    self._skip_unsigned_under_wg(dtype)
    a, b = self._make_operands(dtype, 128, 64, 128)
    res = self._run(
        dtype, a, b,
        compiler_params=plgpu.CompilerParams(approx_math=approx_math),
    )
    np.testing.assert_array_equal(res, a.astype(np.int32) @ b.astype(np.int32).T)

  def test_integer_mma_float_acc_is_rejected(self):
    m, n, k = 64, 8, 128

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
      with self.assertRaisesRegex(
          NotImplementedError,
          "Only int32 accumulator supported for integer and boolean operands",
      ):
        plgpu.mma(acc, a, b)
      o_ref[...] = acc

    kernel(*self._make_operands(jnp.int8, m, n, k))

  @parameterized.product(n=(8, 64), dtype=(jnp.bfloat16, jnp.float16))
  @run_on_sm80
  def test_float_mma_sm80(self, n, dtype):
    m = k = 128

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype)
      )
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, a, b)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    np.testing.assert_allclose(
        kernel(a, b),
        a.astype(np.float32) @ b.astype(np.float32).T,
        atol=1e-2,
        rtol=1e-2,
    )


class PallasMmaIntegerWGTest(
    PallasMmaIntegerTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
