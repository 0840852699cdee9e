"""Skinny (decode-shaped) warp MMA: one 16-row strip per warp along M."""

import itertools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

WARPS_PER_WARPGROUP = 4
MMA_ROWS_PER_WARP = 16

BLOCK_MS = (16, 32, 48, 64)
DTYPE_NAMES = ("bfloat16", "float16", "int8")
N, K = 128, 128


def skinny_mma_kernel(ctx, a_ref, b_ref, out_ref, scratch, *, block_m, dtype):
  del ctx, scratch
  m_warps = block_m // MMA_ROWS_PER_WARP
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
  is_int = jnp.issubdtype(dtype, jnp.integer)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=utils.is_signed(dtype),
      optimized=False,
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      is_signed=utils.is_signed(dtype), optimized=False,
  )
  acc_ty = utils.dtype_to_ir_type(jnp.int32 if is_int else jnp.float32)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(acc_ty, 0 if is_int else 0.0),
      (block_m, N),
      layout=layouts.acc,
      is_signed=True if is_int else None,
  )
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


class SkinnyMMATest(parameterized.TestCase):

  @parameterized.parameters(*itertools.product(BLOCK_MS, DTYPE_NAMES))
  def test_skinny(self, block_m, dtype_name):
    dtype = jnp.dtype(dtype_name)
    is_int = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_int else jnp.float32
    rng = np.random.default_rng(block_m)
    if is_int:
      a = rng.integers(-128, 128, (block_m, K)).astype(dtype)
      b = rng.integers(-128, 128, (N, K)).astype(dtype)
    else:
      a = rng.standard_normal((block_m, K)).astype(dtype)
      b = rng.standard_normal((N, K)).astype(dtype)

    def kernel(ctx, a_ref, b_ref, out_ref, scratch):
      skinny_mma_kernel(
          ctx, a_ref, b_ref, out_ref, scratch, block_m=block_m, dtype=dtype
      )

    out = mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (WARPS_PER_WARPGROUP * 32, 1, 1),
        (a, b),
        jax.ShapeDtypeStruct((block_m, N), acc_dtype),
        (),
    )(a, b)
    ref = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    np.testing.assert_allclose(out, ref, atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
