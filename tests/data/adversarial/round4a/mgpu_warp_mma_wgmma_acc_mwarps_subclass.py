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


class WarpMmaEpilogueTest(TestCase):
  M_WARPS = 4

  def _layouts(self, dtype):
    return mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=self.M_WARPS)

  def _acc_dtype(self, dtype):
    return jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

  def _operands(self, dtype, m, n, k, *, k_b=None):
    dtype = jnp.dtype(dtype)
    k_b = k if k_b is None else k_b
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k_b)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k_b)).astype(dtype)
    return a, b

  def _load_ab(self, a_ref, b_ref, dtype):
    layouts = self._layouts(dtype)
    is_signed = utils.is_signed(dtype)
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

  def _compile(self, kernel, inputs, out_shape):
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), inputs, out_shape, ()
    )

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8),
      n=(64, 128),
      k=(64, 128),
  )
  def test_mma(self, dtype, n, k):
    m = 128
    acc_dtype = self._acc_dtype(dtype)

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      del ctx
      a_fa, b_fa = self._load_ab(a_ref, b_ref, dtype)
      zero = arith.constant(
          utils.dtype_to_ir_type(acc_dtype),
          0 if jnp.issubdtype(acc_dtype, jnp.integer) else 0.0,
      )
      acc = mgpu.FragmentedArray.splat(
          zero, (m, n), layout=self._layouts(dtype).acc,
          is_signed=utils.is_signed(acc_dtype),
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out_ref, optimized=False)

    a, b = self._operands(dtype, m, n, k)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = self._compile(kernel, (a, b), expected)(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.int8),
      relu=(False, True),
      n=(64, 128),
  )
  def test_mma_bias_epilogue(self, dtype, relu, n):
    m = k = 128
    acc_dtype = self._acc_dtype(dtype)
    acc_is_signed = utils.is_signed(acc_dtype)

    def kernel(ctx, a_ref, b_ref, bias_ref, out_ref, _):
      del ctx
      a_fa, b_fa = self._load_ab(a_ref, b_ref, dtype)
      # Load the bias in the WGMMA layout so the epilogue below can share the
      # helpers used by the WGMMA kernels.
      acc = mgpu.FragmentedArray.load_untiled(
          bias_ref, layout=mgpu.WGMMA_LAYOUT, is_signed=acc_is_signed,
          optimized=False,
      )
      acc = mgpu.mma(acc, a_fa, b_fa)
      if relu:
        acc = acc.max(0 if acc_is_signed else 0.0)
      acc.store_untiled(out_ref, optimized=False)

    a, b = self._operands(dtype, m, n, k)
    if jnp.issubdtype(acc_dtype, jnp.integer):
      bias = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      bias = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    expected = bias + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    if relu:
      expected = np.maximum(expected, 0)
    result = self._compile(kernel, (a, b, bias), expected)(a, b, bias)
    np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.int8),
      k=(96, 160),
  )
  def test_mma_k_padded_weights(self, dtype, k):
    # Weights are stored pre-padded to a multiple of 128 along K, which is
    # what the serving stack hands us.
    m, n = 128, 64
    k_pad = -(-k // 128) * 128
    acc_dtype = self._acc_dtype(dtype)

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      del ctx
      a_fa, b_fa = self._load_ab(a_ref, b_ref, dtype)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(
              utils.dtype_to_ir_type(acc_dtype),
              0 if jnp.issubdtype(acc_dtype, jnp.integer) else 0.0,
          ),
          (m, n),
          layout=self._layouts(dtype).acc,
          is_signed=utils.is_signed(acc_dtype),
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out_ref, optimized=False)

    a, b = self._operands(dtype, m, n, k, k_b=k_pad)
    b[:, k:] = 0
    expected = a.astype(acc_dtype) @ b[:, :k].astype(acc_dtype).T
    result = self._compile(kernel, (a, b), expected)(a, b)
    np.testing.assert_allclose(result, expected, atol=1e-5)


class WarpMmaEpilogueMWarps2Test(WarpMmaEpilogueTest):
  M_WARPS = 2


class WarpMmaEpilogueMWarps1Test(WarpMmaEpilogueTest):
  M_WARPS = 1


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
