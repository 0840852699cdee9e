"""Warp-MMA kernel factory with a K loop, plus an stmatrix epilogue test."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

SHAPES = [
    # (m, n, block_k, k_tiles, m_warps)
    (128, 128, 32, 4, 4),
    (64, 64, 64, 2, 2),
    (32, 128, 16, 8, 1),
]


def make_mma_kernel(*, dtype, m, n, block_k, k_tiles, m_warps):
  mlir_dtype = utils.dtype_to_ir_type(dtype)
  layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
  # With four warps along M the MMA accumulator is exactly the WGMMA layout,
  # which lets the epilogue reuse the WGMMA store path.
  acc_layout = fa.WGMMA_LAYOUT if m_warps == 4 else layouts.acc
  is_signed = utils.is_signed(dtype)
  acc_is_int = jnp.issubdtype(dtype, jnp.integer)

  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    zero = arith.constant(
        utils.dtype_to_ir_type(jnp.int32 if acc_is_int else jnp.float32),
        0 if acc_is_int else 0.0,
    )
    acc = mgpu.FragmentedArray.splat(
        zero, (m, n), layout=acc_layout, is_signed=True if acc_is_int else None
    )
    for kt in range(k_tiles):
      k_slice = utils.ds(kt * block_k, block_k)
      a = mgpu.FragmentedArray.load_untiled(
          utils.memref_slice(a_ref, (slice(None), k_slice)),
          layout=layouts.lhs, is_signed=is_signed, optimized=False,
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(
              utils.memref_slice(b_ref, (slice(None), k_slice)), (1, 0)
          ),
          layout=layouts.rhs, is_signed=is_signed, optimized=False,
      )
      acc = mgpu.mma(acc, a, b)
    acc.store_untiled(out_ref, optimized=False)

  return kernel


class FactoryTest(parameterized.TestCase):

  def test_shapes(self):
    rng = np.random.default_rng(4)
    for i, (m, n, block_k, k_tiles, m_warps) in enumerate(SHAPES):
      dtype = jnp.float16 if i % 2 else jnp.bfloat16
      k = block_k * k_tiles
      a = rng.uniform(-1, 1, (m, k)).astype(dtype)
      b = rng.uniform(-1, 1, (n, k)).astype(dtype)
      kernel = make_mma_kernel(
          dtype=dtype, m=m, n=n, block_k=block_k, k_tiles=k_tiles,
          m_warps=m_warps,
      )
      out = mgpu.as_gpu_kernel(
          kernel, (1, 1, 1), (128, 1, 1), (a, b),
          jax.ShapeDtypeStruct((m, n), jnp.float32), (),
      )(a, b)
      np.testing.assert_allclose(
          out, a.astype(np.float32) @ b.astype(np.float32).T,
          atol=1e-4, rtol=1e-4, err_msg=f"config {i}",
      )

  def test_int8_single_tile(self):
    m, n, k = 128, 64, 64
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (m, k)).astype(jnp.int8)
    b = rng.integers(-128, 128, (n, k)).astype(jnp.int8)
    kernel = make_mma_kernel(
        dtype=jnp.int8, m=m, n=n, block_k=k, k_tiles=1, m_warps=4
    )
    out = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((m, n), jnp.int32), (),
    )(a, b)
    np.testing.assert_array_equal(
        out, a.astype(np.int32) @ b.astype(np.int32).T
    )

  def test_stmatrix_epilogue(self):
    # Uses the MMA lhs register layout only as a source layout for stmatrix.
    m, k = 128, 128
    dtype = jnp.int16

    def kernel(ctx, x_ref, out_ref, x_smem):
      del ctx
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      x = mgpu.FragmentedArray.load_untiled(
          x_ref, layout=layouts.lhs, is_signed=True, optimized=False
      )
      x.store_untiled(x_smem, swizzle=16)
      mgpu.warpgroup_barrier()
      mgpu.FragmentedArray.load_strided(x_smem, is_signed=True).store_untiled(
          out_ref
      )

    x = np.arange(m * k, dtype=np.int32).reshape(m, k).astype(dtype)
    y = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), x,
        jax.ShapeDtypeStruct((m, k), dtype),
        jax.ShapeDtypeStruct((m, k), dtype),
    )(x)
    np.testing.assert_array_equal(y, x)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
