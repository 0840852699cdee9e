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


class WarpMmaShapesTest(TestCase):

  def _zero_acc(self, layouts, shape, acc_dtype):
    f32 = ir.F32Type.get()
    zero = mgpu.FragmentedArray.splat(
        utils.c(0.0, f32), shape, layout=layouts.acc
    )
    if acc_dtype == jnp.float32:
      return zero
    return zero.astype(utils.dtype_to_ir_type(acc_dtype))

  def _run_mma(self, dtype, m, n, k, m_warps, acc_dtype):
    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      is_signed = utils.is_signed(dtype)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, is_signed=is_signed, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=layouts.rhs,
          is_signed=is_signed,
          optimized=False,
      )
      acc = self._zero_acc(layouts, (m, n), acc_dtype)
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ()
    )(a, b)
    return result, expected

  @parameterized.product(
      dtype=(jnp.float16, jnp.bfloat16),
      m_warps=(1, 2, 4),
      n=(8, 16, 32, 64),
  )
  def test_warp_mma_narrow_n(self, dtype, m_warps, n):
    # Each warp covers 8 columns of N, so N has to be divisible by 8 * m_warps.
    if n % (8 * m_warps):
      self.skipTest(f"N={n} is not divisible by the warp tile for {m_warps=}")
    result, expected = self._run_mma(dtype, 128, n, 64, m_warps, jnp.float32)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.product(
      dtype=(jnp.int8, jnp.int4),
      m_warps=(2, 4),
      k_mult=(1, 2),
  )
  def test_warp_mma_int_zero_acc(self, dtype, m_warps, k_mult):
    k = 128 * k_mult
    result, expected = self._run_mma(dtype, 128, 64, k, m_warps, jnp.int32)
    np.testing.assert_array_equal(result, expected)

  def test_warp_mma_shape_mismatch(self):
    def kernel(ctx, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(ir.F16Type.get(), m_warps=4)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=layouts.lhs, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      acc = self._zero_acc(layouts, (128, 64), jnp.float32)
      with self.assertRaisesRegex(ValueError, "K mismatch"):
        mgpu.mma(acc, a_fa, b_fa)
      acc.store_untiled(out, optimized=False)

    a = np.zeros((128, 64), jnp.float16)
    b = np.zeros((64, 128), jnp.float16)
    out_shape = jax.ShapeDtypeStruct((128, 64), jnp.float32)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out_shape, ())(
        a, b
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
