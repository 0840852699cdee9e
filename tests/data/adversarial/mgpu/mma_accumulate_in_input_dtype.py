# Warp MMA with a caller-provided accumulator (C = C + A @ B), swept over
# operand dtypes.

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils
import jax.numpy as jnp
import numpy as np


def _accumulator_dtype(dtype):
  # Integer products must be accumulated in 32 bits; floats stay in their
  # own precision to keep the accumulator small.
  if jnp.issubdtype(dtype, jnp.integer):
    return jnp.int32
  return dtype


def _gemm_kernel(ctx, c_ref, a_ref, b_ref, out_ref, _, *, dtype, acc_dtype):
  layouts = mgpu.MMALayouts(mgpu_utils.dtype_to_ir_type(dtype))
  is_signed = mgpu_utils.is_signed(dtype)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=is_signed, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      mgpu_utils.memref_transpose(b_ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=is_signed,
      optimized=False,
  )
  c = mgpu.FragmentedArray.load_untiled(
      c_ref, layout=layouts.acc, is_signed=mgpu_utils.is_signed(acc_dtype),
      optimized=False,
  )
  mgpu.mma(c, a, b).store_untiled(out_ref, optimized=False)


class AccumulateTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(0)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.named_parameters(
      ("bf16", jnp.bfloat16),
      ("f16", jnp.float16),
      ("s8", jnp.int8),
  )
  def test_accumulate(self, dtype):
    m, n, k = 128, 64, 128
    acc_dtype = _accumulator_dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      a = self.prng.integers(-128, 128, (m, k)).astype(dtype)
      b = self.prng.integers(-128, 128, (n, k)).astype(dtype)
      c = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
      c = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)
    kernel = functools.partial(_gemm_kernel, dtype=dtype, acc_dtype=acc_dtype)
    out_shape = jax.ShapeDtypeStruct((m, n), acc_dtype)
    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (c, a, b), out_shape, ()
    )
    expected = c.astype(np.float32) + (
        a.astype(np.float32) @ b.astype(np.float32).T
    )
    np.testing.assert_allclose(
        np.asarray(f(c, a, b), dtype=np.float32), expected, atol=5e-2
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
