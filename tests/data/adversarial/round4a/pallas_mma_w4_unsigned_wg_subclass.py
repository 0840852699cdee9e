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


class PallasMmaQuantTest(PallasTest):
  """W4A4 matmuls through ``plgpu.mma``."""

  QUANT_DTYPE = jnp.int4

  def _random_q(self, shape):
    iinfo = jnp.iinfo(self.QUANT_DTYPE)
    return self.prng.integers(iinfo.min, iinfo.max + 1, shape).astype(
        self.QUANT_DTYPE
    )

  def _load_operands(self, a_ref, b_ref):
    dtype = self.QUANT_DTYPE
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    return a, b

  def _int_reference(self, a, b):
    return a.astype(np.int32) @ b.astype(np.int32).T

  @parameterized.product(
      m=(64, 128),
      n=(8, 64),
      k=(64, 128),
  )
  def test_w4a4_mma(self, m, n, k):
    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.int32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.int32), plgpu.Layout.MMA_ACC(self.QUANT_DTYPE)
      )
      a, b = self._load_operands(a_ref, b_ref)
      o_ref[...] = plgpu.mma(acc, a, b)

    a, b = self._random_q((m, k)), self._random_q((n, k))
    np.testing.assert_array_equal(kernel(a, b), self._int_reference(a, b))

  @parameterized.product(
      n=(8, 64),
      per_channel=(False, True),
  )
  def test_w4a4_scaled_mma(self, n, per_channel):
    # The scales are folded in after the MMA, so accumulate directly in f32
    # and skip the int32 -> f32 conversion pass.
    m, k = 128, 128
    if per_channel:
      scale = self.prng.uniform(0.5, 2.0, (1, n)).astype(np.float32)
    else:
      scale = np.full((1, n), 0.25, np.float32)

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, scale_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), jnp.float32),
          plgpu.Layout.MMA_ACC(self.QUANT_DTYPE),
      )
      a, b = self._load_operands(a_ref, b_ref)
      acc = plgpu.mma(acc, a, b)
      o_ref[...] = acc * scale_ref[...]

    a, b = self._random_q((m, k)), self._random_q((n, k))
    np.testing.assert_allclose(
        kernel(a, b, scale), self._int_reference(a, b) * scale, rtol=1e-6
    )


class PallasMmaQuantWGTest(
    PallasMmaQuantTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


class PallasMmaQuantUnsignedTest(PallasMmaQuantTest):
  QUANT_DTYPE = jnp.uint4


class PallasMmaQuantUnsignedWGTest(
    PallasMmaQuantUnsignedTest,
    lowering_semantics=plgpu.LoweringSemantics.Warpgroup,
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
