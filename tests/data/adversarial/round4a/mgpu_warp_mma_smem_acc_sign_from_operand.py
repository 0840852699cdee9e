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


class WarpMmaSmemTest(TestCase):
  SWIZZLE = 16

  def _shapes(self, dtype, m_warps, mults):
    n_warps = 4 // m_warps
    m_mult, n_mult = mults
    bw = utils.bytewidth(utils.dtype_to_ir_type(dtype))
    return 16 * m_warps * m_mult, 8 * n_warps * n_mult, 32 // bw

  def _tiling(self, dtype):
    bw = utils.bytewidth(utils.dtype_to_ir_type(dtype))
    return (8, self.SWIZZLE // bw)

  def _random_operands(self, dtype, m, n, k):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    return a, b

  def _copy_to_smem(self, ctx, a, b, smem, tiling):
    smem_a, smem_b, barriers = smem
    for src, dst, barrier in ((a, smem_a, barriers[0]), (b, smem_b, barriers[1])):
      ctx.async_copy(
          src_ref=src,
          dst_ref=dst,
          swizzle=self.SWIZZLE,
          gmem_transform=(mgpu.TileTransform(tiling),),
          barrier=barrier,
      )
    for i in range(2):
      barriers[i].wait()
    return smem_a, smem_b

  def _load_operands(self, smem_a, smem_b, mma_layouts, is_signed):
    a = mgpu.FragmentedArray.load_tiled(
        smem_a, layout=mma_layouts.lhs, is_signed=is_signed,
        swizzle=self.SWIZZLE,
    )
    smem_b_t = utils.memref_transpose(smem_b, (1, 0, 3, 2))
    b = mgpu.FragmentedArray.load_tiled(
        smem_b_t, layout=mma_layouts.rhs, is_signed=is_signed,
        swizzle=self.SWIZZLE,
    )
    return a, b

  def _smem_shapes(self, dtype, m, n, k):
    tiling = self._tiling(dtype)
    return (
        jax.ShapeDtypeStruct(mgpu.tile_shape((m, k), tiling), dtype),
        jax.ShapeDtypeStruct(mgpu.tile_shape((n, k), tiling), dtype),
        mgpu.TMABarrier(2),
    )

  @parameterized.product(
      dtype=(jnp.float16, jnp.int8, jnp.uint8),
      m_warps=(4, 2, 1),
      mults=((1, 1), (2, 1), (1, 2), (3, 3)),
  )
  @jtu.thread_unsafe_test()
  def test_warp_mma_smem(self, dtype, m_warps, mults):
    m, n, k = self._shapes(dtype, m_warps, mults)
    mlir_dtype = utils.dtype_to_ir_type(dtype)
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32
    tiling = self._tiling(dtype)

    def kernel(ctx, a, b, out, smem):
      smem_a, smem_b = self._copy_to_smem(ctx, a, b, smem, tiling)
      mma_layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
      is_signed = utils.is_signed(dtype)
      a, b = self._load_operands(smem_a, smem_b, mma_layouts, is_signed)
      c0 = arith.constant(
          utils.dtype_to_ir_type(acc_dtype), 0 if is_integer else 0.0
      )
      acc = mgpu.FragmentedArray.splat(
          c0, shape=(m, n), layout=mma_layouts.acc, is_signed=is_signed
      )
      acc = mgpu.mma(acc, a, b)
      acc.store_untiled(out, optimized=False)

    a, b = self._random_operands(dtype, m, n, k)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected,
        self._smem_shapes(dtype, m, n, k),
    )(a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)

  @parameterized.product(
      dtype=(jnp.float16, jnp.int8),
      m_warps=(4, 2),
      mults=((1, 1), (2, 2)),
  )
  def test_warp_mma_smem_with_bias(self, dtype, m_warps, mults):
    m, n, k = self._shapes(dtype, m_warps, mults)
    mlir_dtype = utils.dtype_to_ir_type(dtype)
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32
    tiling = self._tiling(dtype)

    def kernel(ctx, a, b, bias, out, smem):
      smem_a, smem_b = self._copy_to_smem(ctx, a, b, smem, tiling)
      mma_layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
      a, b = self._load_operands(
          smem_a, smem_b, mma_layouts, utils.is_signed(dtype)
      )
      # The bias is read straight from GMEM and used as the initial value of
      # the accumulator.
      acc = mgpu.FragmentedArray.load_strided(
          bias, is_signed=utils.is_signed(acc_dtype)
      )
      acc = mgpu.mma(acc, a, b)
      acc.store_untiled(out, optimized=False)

    a, b = self._random_operands(dtype, m, n, k)
    if is_integer:
      bias = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      bias = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    expected = bias + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b, bias), expected,
        self._smem_shapes(dtype, m, n, k),
    )(a, b, bias)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
