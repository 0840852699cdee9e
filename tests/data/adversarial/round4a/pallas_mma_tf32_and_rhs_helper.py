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
from jax.experimental import pallas as pl
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


class PallasMmaLayoutTest(PallasTest):

  def _load(self, ref, dtype, *, rhs=False):
    layout = plgpu.Layout.MMA_RHS if rhs else plgpu.Layout.MMA_LHS
    return plgpu.load(ref, layout=layout(dtype), optimized=False)

  def _zeros_acc(self, m, n, dtype):
    acc_dtype = jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32
    return plgpu.layout_cast(
        jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )

  def _operands(self, m, n, k, dtype):
    a = jax.random.uniform(jax.random.key(0), (m, k), jnp.float32, -1, 1)
    b = jax.random.uniform(jax.random.key(1), (n, k), jnp.float32, -1, 1)
    return a.astype(dtype), b.astype(dtype)

  @jtu.sample_product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.float32),
      m=(64, 128),
      n=(8, 64),
      k=(64, 128),
  )
  def test_mma_float(self, dtype, m, n, k):
    # float32 inputs go through the tf32 path of mma.sync.
    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = self._zeros_acc(m, n, dtype)
      a = self._load(a_ref, dtype)
      b = self._load(b_ref.T, dtype, rhs=True)
      o_ref[...] = plgpu.mma(acc, a, b)

    a, b = self._operands(m, n, k, dtype)
    tol = 1e-2 if dtype != jnp.float32 else 2e-3
    np.testing.assert_allclose(
        kernel(a, b),
        jnp.dot(a.astype(jnp.float32), b.T.astype(jnp.float32)),
        atol=tol,
        rtol=tol,
    )

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16),
      num_k_blocks=(1, 2, 4),
      block_k=(64, 128),
  )
  def test_mma_k_loop(self, dtype, num_k_blocks, block_k):
    m, n = 128, 64
    k = num_k_blocks * block_k

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      def body(i, acc):
        ks = pl.ds(i * block_k, block_k)
        a = self._load(a_ref.at[:, ks], dtype)
        b = self._load(b_ref.at[:, ks].T, dtype)
        return plgpu.mma(acc, a, b)

      o_ref[...] = jax.lax.fori_loop(
          0, num_k_blocks, body, self._zeros_acc(m, n, dtype)
      )

    a, b = self._operands(m, n, k, dtype)
    np.testing.assert_allclose(
        kernel(a, b),
        jnp.dot(a.astype(jnp.float32), b.T.astype(jnp.float32)),
        atol=1e-2,
        rtol=1e-2,
    )

  def test_mma_bad_shapes(self):
    m, n, k = 128, 64, 64

    @functools.partial(
        self.kernel, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = self._zeros_acc(m, n, jnp.float16)
      a = self._load(a_ref, jnp.float16)
      b = self._load(b_ref.T, jnp.float16, rhs=True)
      with self.assertRaisesRegex(
          ValueError, "Incompatible shapes for matrix multiplication"
      ):
        plgpu.mma(acc, b, a)
      o_ref[...] = plgpu.mma(acc, a, b)

    a, b = self._operands(m, n, k, jnp.float16)
    kernel(a, b)


class PallasMmaLayoutWGTest(
    PallasMmaLayoutTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
