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


class WarpMmaOperandTypesTest(TestCase):
  """Operand type combinations accepted by ``mgpu.mma``.

  ``LHS_DTYPE``/``RHS_DTYPE`` select the operand types; the accumulator
  always uses the m_warps=4 layout, which is the same as ``WGMMA_LAYOUT``.
  """
  LHS_DTYPE = jnp.int8
  RHS_DTYPE = jnp.uint8
  LAYOUT_DTYPE = jnp.int8

  def _acc_dtype(self):
    if jnp.issubdtype(self.LHS_DTYPE, jnp.integer):
      return jnp.int32
    return jnp.float32

  def _random(self, shape, dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      return self.prng.integers(iinfo.min, iinfo.max + 1, shape).astype(dtype)
    return self.prng.uniform(-1, 1, shape).astype(dtype)

  def _kernel(self, m, n):
    acc_dtype = self._acc_dtype()
    is_integer = acc_dtype == jnp.int32

    def kernel(ctx, a, b, out, _):
      del ctx
      # Layouts only depend on the operand bit width.
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(self.LAYOUT_DTYPE))
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, is_signed=utils.is_signed(self.LHS_DTYPE),
          optimized=False,
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=layouts.rhs,
          is_signed=utils.is_signed(self.RHS_DTYPE),
          optimized=False,
      )
      acc_ty = utils.dtype_to_ir_type(acc_dtype)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0 if is_integer else 0.0, acc_ty),
          (m, n),
          layout=mgpu.WGMMA_LAYOUT,
          is_signed=True if is_integer else None,
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    return kernel

  @parameterized.product(
      m=(64, 128),
      n=(8, 64, 128),
      k=(64, 128),
  )
  def test_mma(self, m, n, k):
    acc_dtype = self._acc_dtype()
    a = self._random((m, k), self.LHS_DTYPE)
    b = self._random((n, k), self.RHS_DTYPE)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        self._kernel(m, n), (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    if acc_dtype == jnp.int32:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)

  def test_bad_accumulators_are_rejected(self):
    m, n, k = 64, 8, 64

    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, is_signed=True, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)), layout=layouts.rhs,
          is_signed=True, optimized=False,
      )
      f32_acc = mgpu.FragmentedArray.splat(
          utils.c(0.0, ir.F32Type.get()), (m, n), layout=layouts.acc
      )
      with self.assertRaisesRegex(
          NotImplementedError, "Only s32 accumulator supported"
      ):
        mgpu.mma(f32_acc, a_fa, b_fa)
      u32_acc = mgpu.FragmentedArray.splat(
          utils.c(0, ir.IntegerType.get_signless(32)), (m, n),
          layout=layouts.acc, is_signed=False,
      )
      with self.assertRaisesRegex(
          ValueError, "Only signed accumulator supported"
      ):
        mgpu.mma(u32_acc, a_fa, b_fa)
      # Re-tag the accumulator as signed and run the real MMA.
      s32_acc = u32_acc.astype(ir.IntegerType.get_signless(32), is_signed=True)
      mgpu.mma(s32_acc, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self._random((m, k), jnp.int8)
    b = self._random((n, k), jnp.int8)
    expected = a.astype(np.int32) @ b.astype(np.int32).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    np.testing.assert_array_equal(result, expected)


class WarpMmaUnsignedActivationsTest(WarpMmaOperandTypesTest):
  LHS_DTYPE = jnp.uint8
  RHS_DTYPE = jnp.int8


class WarpMmaBF16WithF16LayoutsTest(WarpMmaOperandTypesTest):
  LHS_DTYPE = jnp.bfloat16
  RHS_DTYPE = jnp.bfloat16
  LAYOUT_DTYPE = jnp.float16


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
