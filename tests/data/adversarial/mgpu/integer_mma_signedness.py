# Integer warp MMA from shared memory, in the style of test_warp_mma_smem,
# plus a register-only variant that builds its own zero accumulator.

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class IntegerWarpMmaTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    if not jtu.is_cuda_compute_capability_at_least("9.0"):
      self.skipTest("Only works on sm90+")
    super().setUp()
    self.prng = np.random.default_rng(1234)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.product(
      dtype=(jnp.int8, jnp.uint8),
      m_warps=(4, 2, 1),
  )
  def test_integer_mma_smem(self, dtype, m_warps):
    n_warps = 4 // m_warps
    mlir_dtype = utils.dtype_to_ir_type(dtype)
    bw = utils.bytewidth(mlir_dtype)
    m, n, k = 16 * m_warps * 2, 8 * n_warps * 2, 32 // bw
    dtype = jnp.dtype(dtype)
    swizzle = 16
    tiling = (8, swizzle // bw)

    def kernel(ctx, a, b, out, smem):
      smem_a, smem_b, barriers = smem
      ctx.async_copy(src_ref=a, dst_ref=smem_a, swizzle=swizzle,
                     gmem_transform=(mgpu.TileTransform(tiling),),
                     barrier=barriers[0])
      ctx.async_copy(src_ref=b, dst_ref=smem_b, swizzle=swizzle,
                     gmem_transform=(mgpu.TileTransform(tiling),),
                     barrier=barriers[1])
      barriers[0].wait()
      barriers[1].wait()
      layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
      is_signed = utils.is_signed(dtype)
      a_fa = mgpu.FragmentedArray.load_tiled(
          smem_a, layout=layouts.lhs, is_signed=is_signed, swizzle=swizzle
      )
      b_fa = mgpu.FragmentedArray.load_tiled(
          utils.memref_transpose(smem_b, (1, 0, 3, 2)),
          layout=layouts.rhs, is_signed=is_signed, swizzle=swizzle,
      )
      i32 = ir.IntegerType.get_signless(32)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(i32, 0), shape=(m, n), layout=layouts.acc,
          is_signed=is_signed,
      )
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

    iinfo = jnp.iinfo(dtype)
    a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
    b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    expected = a.astype(jnp.int32) @ b.astype(jnp.int32).T
    smem_shapes = (
        jax.ShapeDtypeStruct(mgpu.tile_shape((m, k), tiling), dtype),
        jax.ShapeDtypeStruct(mgpu.tile_shape((n, k), tiling), dtype),
        mgpu.TMABarrier(2),
    )
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, smem_shapes
    )(a, b)
    np.testing.assert_array_equal(result, expected)

  def test_int8_mma_registers(self):
    m, n, k = 64, 64, 64

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      i8 = ir.IntegerType.get_signless(8)
      i32 = ir.IntegerType.get_signless(32)
      layouts = mgpu.MMALayouts(i8)
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          is_signed=True, optimized=False)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0, i32), (m, n), layout=layouts.acc)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.integers(-128, 128, (m, k)).astype(jnp.int8)
    b = self.prng.integers(-128, 128, (n, k)).astype(jnp.int8)
    expected = a.astype(np.int32) @ b.astype(np.int32).T
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.int32)
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), out_shape, ()
    )(a, b)
    np.testing.assert_array_equal(result, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
