"""Sweep of warp MMA over paired (operand, accumulator) dtypes, accumulator zero-initialized in registers."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

OPERAND_DTYPES = [jnp.bfloat16, jnp.int8, jnp.uint8, jnp.int4]
ACC_DTYPES = [jnp.float32, jnp.int32, jnp.int32, jnp.int32]
SWEEP = list(zip(OPERAND_DTYPES, ACC_DTYPES))

M, N, K = 128, 128, 128


def _make_kernel(dtype, acc_dtype):
  dtype = jnp.dtype(dtype)
  is_integer = jnp.issubdtype(dtype, jnp.integer)

  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    mlir_dtype = utils.dtype_to_ir_type(dtype)
    layouts = mgpu.MMALayouts(mlir_dtype)
    is_signed = utils.is_signed(dtype)
    a = mgpu.FragmentedArray.load_untiled(
        a_ref, layout=layouts.lhs, is_signed=is_signed, optimized=False
    )
    b = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)),
        layout=layouts.rhs,
        is_signed=is_signed,
        optimized=False,
    )
    c0 = arith.constant(
        utils.dtype_to_ir_type(acc_dtype), 0 if is_integer else 0.0
    )
    # Same idiom as test_warp_mma_smem: signedness taken from the operands.
    acc = mgpu.FragmentedArray.splat(
        c0, shape=(M, N), layout=layouts.acc, is_signed=is_signed
    )
    acc = mgpu.mma(acc, a, b)
    acc.store_untiled(out_ref, optimized=False)

  return kernel


class PairedDtypeSweepTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.prng = np.random.default_rng(0)

  @parameterized.parameters(*SWEEP)
  def test_paired(self, dtype, acc_dtype):
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
      info = jnp.iinfo(dtype)
      a = self.prng.integers(info.min, info.max + 1, (M, K)).astype(dtype)
      b = self.prng.integers(info.min, info.max + 1, (N, K)).astype(dtype)
    else:
      a = self.prng.uniform(-1, 1, (M, K)).astype(dtype)
      b = self.prng.uniform(-1, 1, (N, K)).astype(dtype)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        _make_kernel(dtype, acc_dtype),
        (1, 1, 1),
        (128, 1, 1),
        (a, b),
        jax.ShapeDtypeStruct((M, N), acc_dtype),
        (),
    )(a, b)
    if jnp.issubdtype(dtype, jnp.integer):
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
