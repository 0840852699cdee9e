# Copyright 2024 The JAX Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Tests for warp-level MMA in Mosaic GPU (excerpt)."""

import contextlib
import sys

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import config
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import core
from jax.experimental.mosaic.gpu import dialect as mgpu_dialect
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

try:
  import jax._src.lib.mosaic_gpu as mosaic_gpu_lib  # noqa: F401
  HAS_MOSAIC_GPU = True
except ImportError:
  mosaic_gpu_lib = None
  HAS_MOSAIC_GPU = False


config.parse_flags_with_absl()


class TestCase(parameterized.TestCase):

  def setUp(self, *, artificial_shared_memory_limit=jtu._SMEM_SIZE_BOUND_FOR_TESTS, min_compute_capability="9.0"):
    if jtu.test_device_matches(["rocm"]):
      self.skipTest("Mosaic GPU is not supported on ROCm.")
    if not HAS_MOSAIC_GPU:
      self.skipTest("jaxlib built without Mosaic GPU")
    if (not jtu.test_device_matches(["cuda"]) or
        not jtu.is_cuda_compute_capability_at_least(min_compute_capability)):
      self.skipTest(f"Only works on GPU with capability >= sm{min_compute_capability.replace('.', '')}")
    super().setUp()
    self.prng = np.random.default_rng(1234)
    self.context = mlir.make_ir_context()
    mgpu_dialect.register_dialect(self.context)
    self.enter_context(config.traceback_filtering("off"))
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())
    self.enter_context(core.artificial_shared_memory_limit(artificial_shared_memory_limit))

  @contextlib.contextmanager
  def capture_stdout(self):
    if "pytest" in sys.modules:
      self.skipTest("pytest interacts badly with GPU stdout capture")
    if mosaic_gpu_lib is None:
      raise ValueError("Running tests but missing Mosaic GPU extension")
    with jtu.capture_stdout() as stdout:
      yield stdout
      # We need to cudaDeviceSynchronize to make sure printfs are flushed.
      mosaic_gpu_lib._mosaic_gpu_ext._sync_all_devices()


class WarpMmaAccumulateTest(TestCase):
  """Runs ``acc + a @ b.T`` through ``mgpu.mma``.

  Subclasses pick the operand and accumulator types through class attributes.
  """
  IN_DTYPE = jnp.bfloat16
  ACC_DTYPE = jnp.float32
  M_WARPS = 4

  def _is_integer(self):
    return jnp.issubdtype(self.IN_DTYPE, jnp.integer)

  def _make_operands(self, m, n, k):
    dtype = jnp.dtype(self.IN_DTYPE)
    if self._is_integer():
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
      acc = self.prng.integers(-100, 100, (m, n)).astype(self.ACC_DTYPE)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
      acc = self.prng.uniform(-1, 1, (m, n)).astype(self.ACC_DTYPE)
    return acc, a, b

  def _layouts(self):
    return mgpu.MMALayouts(
        utils.dtype_to_ir_type(self.IN_DTYPE), m_warps=self.M_WARPS
    )

  def _run(self, acc, a, b, *, lhs_layout=None):
    in_is_signed = utils.is_signed(self.IN_DTYPE)
    acc_is_signed = utils.is_signed(self.ACC_DTYPE)

    def kernel(ctx, acc_ref, a_ref, b_ref, out_ref, _):
      del ctx
      layouts = self._layouts()
      a_fa = mgpu.FragmentedArray.load_untiled(
          a_ref,
          layout=layouts.lhs if lhs_layout is None else lhs_layout,
          is_signed=in_is_signed,
          optimized=False,
      )
      b_t = utils.memref_transpose(b_ref, (1, 0))
      b_fa = mgpu.FragmentedArray.load_untiled(
          b_t, layout=layouts.rhs, is_signed=in_is_signed, optimized=False
      )
      acc_fa = mgpu.FragmentedArray.load_untiled(
          acc_ref, layout=layouts.acc, is_signed=acc_is_signed,
          optimized=False,
      )
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out_ref, optimized=False)

    out_shape = jax.ShapeDtypeStruct(acc.shape, self.ACC_DTYPE)
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), out_shape, ()
    )(acc, a, b)

  def _check(self, result, acc, a, b):
    expected = acc + a.astype(self.ACC_DTYPE) @ b.astype(self.ACC_DTYPE).T
    if self._is_integer():
      np.testing.assert_array_equal(result, expected)
    else:
      atol = 1e-2 if jnp.dtype(self.ACC_DTYPE).itemsize == 2 else 1e-5
      np.testing.assert_allclose(
          np.asarray(result, np.float32), np.asarray(expected, np.float32),
          atol=atol,
      )

  @parameterized.product(
      m=(64, 128),
      n=(16, 64),
      k_steps=(1, 2, 4),
  )
  def test_mma(self, m, n, k_steps):
    k = 64 * k_steps
    acc, a, b = self._make_operands(m, n, k)
    self._check(self._run(acc, a, b), acc, a, b)

  def test_mma_zero_acc(self):
    acc, a, b = self._make_operands(128, 64, 128)
    acc = np.zeros_like(acc)
    self._check(self._run(acc, a, b), acc, a, b)

  def test_mma_lhs_in_wgmma_layout(self):
    # The A operand typically comes out of a WGMMA epilogue, so make sure we
    # accept it in the layout WGMMA produces it in.
    if self._is_integer():
      self.skipTest("The 8-bit WGMMA layout is tested in WGMMATest.")
    acc, a, b = self._make_operands(128, 64, 64)
    result = self._run(acc, a, b, lhs_layout=mgpu.WGMMA_LAYOUT)
    self._check(result, acc, a, b)


class WarpMmaF16Test(WarpMmaAccumulateTest):
  IN_DTYPE = jnp.float16


class WarpMmaF16AccTest(WarpMmaF16Test):
  # Half-precision accumulation, like cuBLAS HGEMM.
  ACC_DTYPE = jnp.float16


class WarpMmaInt8Test(WarpMmaAccumulateTest):
  IN_DTYPE = jnp.int8
  ACC_DTYPE = jnp.int32


class WarpMmaMWarps2Test(WarpMmaAccumulateTest):
  M_WARPS = 2


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
