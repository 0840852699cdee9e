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


_FLOAT_DTYPES = (jnp.bfloat16, jnp.float16)
_INT_DTYPES = (jnp.int8, jnp.uint8, jnp.int4, jnp.uint4)


class WarpMmaTestBase(TestCase):

  def _acc_dtype(self, dtype):
    return jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

  def _random(self, shape, dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      return self.prng.integers(iinfo.min, iinfo.max + 1, shape).astype(dtype)
    return self.prng.uniform(-1, 1, shape).astype(dtype)

  def _load_ab(self, a_ref, b_ref, layouts, acc_dtype):
    # Operands and accumulator share signedness: everything is signed for
    # integer MMAs and None for floating point ones.
    is_signed = utils.is_signed(acc_dtype)
    a_fa = mgpu.FragmentedArray.load_untiled(
        a_ref, layout=layouts.lhs, is_signed=is_signed, optimized=False
    )
    b_fa = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)),
        layout=layouts.rhs,
        is_signed=is_signed,
        optimized=False,
    )
    return a_fa, b_fa

  def _load_acc(self, acc_ref, layouts, acc_dtype):
    return mgpu.FragmentedArray.load_untiled(
        acc_ref, layout=layouts.acc, is_signed=utils.is_signed(acc_dtype),
        optimized=False,
    )

  def _assert_close(self, dtype, result, expected):
    if jnp.issubdtype(dtype, jnp.integer):
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


class WarpMmaIntegerTest(WarpMmaTestBase):

  @parameterized.product(
      dtype=_INT_DTYPES,
      m_warps=(1, 2, 4),
      shape=((128, 128, 128), (64, 128, 256)),
  )
  def test_warp_mma_integer(self, dtype, m_warps, shape):
    m, n, k = shape
    acc_dtype = self._acc_dtype(dtype)

    def kernel(ctx, acc, a, b, out, _):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      a_fa, b_fa = self._load_ab(a, b, layouts, acc_dtype)
      acc_fa = self._load_acc(acc, layouts, acc_dtype)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    a = self._random((m, k), dtype)
    b = self._random((n, k), dtype)
    acc = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    self._assert_close(dtype, result, expected)


class WarpMmaSplitKTest(WarpMmaTestBase):

  @parameterized.product(
      dtype=(*_FLOAT_DTYPES, jnp.int8),
      m_warps=(1, 2, 4),
      zero_init=(False, True),
  )
  def test_warp_mma_split_k(self, dtype, m_warps, zero_init):
    # K is split into two halves that arrive in separate buffers; the second
    # MMA accumulates on top of the first.
    m = n = k_half = 128
    acc_dtype = self._acc_dtype(dtype)

    def kernel(ctx, acc, a_lo, a_hi, b_lo, b_hi, out, _):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      a0, b0 = self._load_ab(a_lo, b_lo, layouts, acc_dtype)
      a1, b1 = self._load_ab(a_hi, b_hi, layouts, acc_dtype)
      acc_fa = self._load_acc(acc, layouts, acc_dtype)
      acc_fa = mgpu.mma(acc_fa, a0, b0)
      acc_fa = mgpu.mma(a1, b1, acc_fa)
      acc_fa.store_untiled(out, optimized=False)

    a = self._random((m, 2 * k_half), dtype)
    b = self._random((n, 2 * k_half), dtype)
    if zero_init:
      acc = np.zeros((m, n), acc_dtype)
    else:
      acc = self._random((m, n), acc_dtype) if acc_dtype == jnp.float32 else (
          self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
      )
    a_lo, a_hi = np.ascontiguousarray(a[:, :k_half]), np.ascontiguousarray(a[:, k_half:])
    b_lo, b_hi = np.ascontiguousarray(b[:, :k_half]), np.ascontiguousarray(b[:, k_half:])
    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    inputs = (acc, a_lo, a_hi, b_lo, b_hi)
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), inputs, expected, ()
    )(*inputs)
    self._assert_close(dtype, result, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
