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


_MMA_DTYPES = (
    jnp.bfloat16,
    jnp.float16,
    jnp.float8_e4m3fn,
    jnp.float8_e5m2,
    jnp.int8,
    jnp.uint8,
    jnp.int4,
    jnp.uint4,
)


class WarpMmaTileTest(TestCase):

  def _tile_shape(self, dtype, m_warps, m_mult, n_mult, k_mult):
    """Returns an (m, n, k) that is a whole number of MMA base tiles."""
    n_warps = 4 // m_warps
    bw = utils.bitwidth(utils.dtype_to_ir_type(dtype))
    return 16 * m_warps * m_mult, 8 * n_warps * n_mult, (256 // bw) * k_mult

  def _types(self, dtype):
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32
    return dtype, acc_dtype, is_integer

  def _random(self, shape, dtype):
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      return self.prng.integers(iinfo.min, iinfo.max + 1, shape).astype(dtype)
    return self.prng.uniform(-1, 1, shape).astype(dtype)

  def _mma_kernel(self, dtype, acc_dtype, m_warps):
    def kernel(ctx, acc, a, b, out, _):
      del ctx
      mma_layouts = mgpu.MMALayouts(
          utils.dtype_to_ir_type(dtype), m_warps=m_warps
      )
      ab_is_signed = utils.is_signed(dtype)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=mma_layouts.lhs, is_signed=ab_is_signed, optimized=False
      )
      b_fa = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b, (1, 0)),
          layout=mma_layouts.rhs,
          is_signed=ab_is_signed,
          optimized=False,
      )
      acc_fa = mgpu.FragmentedArray.load_untiled(
          acc, layout=mma_layouts.acc, is_signed=utils.is_signed(acc_dtype),
          optimized=False,
      )
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    return kernel

  def _run_and_check(self, dtype, m_warps, m, n, k, *, zero_acc=False):
    dtype, acc_dtype, is_integer = self._types(dtype)
    a = self._random((m, k), dtype)
    b = self._random((n, k), dtype)
    if zero_acc:
      acc = np.zeros((m, n), acc_dtype)
    elif is_integer:
      acc = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      acc = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        self._mma_kernel(dtype, acc_dtype, m_warps),
        (1, 1, 1), (128, 1, 1), (acc, a, b), expected, (),
    )(acc, a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)

  @jtu.sample_product(
      dtype=_MMA_DTYPES,
      m_warps=(1, 2, 4),
      m_mult=(1, 2),
      n_mult=(1, 3),
      k_mult=(1, 2),
  )
  def test_warp_mma_tiles(self, dtype, m_warps, m_mult, n_mult, k_mult):
    m, n, k = self._tile_shape(dtype, m_warps, m_mult, n_mult, k_mult)
    self._run_and_check(dtype, m_warps, m, n, k)

  @parameterized.product(
      dtype=_MMA_DTYPES,
      m_warps=(1, 2, 4),
  )
  def test_warp_mma_zero_acc(self, dtype, m_warps):
    # Reuses the tiling helper of test_warp_mma_tiles with the largest tile.
    m, n, k = self._tile_shape(dtype, m_warps, 2, 2, 2)
    self._run_and_check(dtype, m_warps, m, n, k, zero_acc=True)

  @parameterized.parameters(0, 3, 8)
  def test_invalid_m_warps(self, m_warps):
    with self.assertRaisesRegex(ValueError, "m_warps must be 1, 2, or 4"):
      mgpu.MMALayouts(ir.BF16Type.get(), m_warps=m_warps)

  def test_unaligned_n_raises(self):
    m, n, k = 64, 24, 64

    def kernel(ctx, acc, a, b, out, _):
      del ctx
      mma_layouts = mgpu.MMALayouts(ir.BF16Type.get(), m_warps=2)
      with self.assertRaisesRegex(ValueError, "does not apply to shape"):
        mgpu.FragmentedArray.load_untiled(
            acc, layout=mma_layouts.acc, optimized=False
        )
      del a, b, out

    dtype, acc_dtype, _ = self._types(jnp.bfloat16)
    acc = np.zeros((m, n), acc_dtype)
    a = self._random((m, k), dtype)
    b = self._random((n, k), dtype)
    mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ()
    )(acc, a, b)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
