"""Hopper u8 x u8 -> s32 GEMM for image-feature histograms (raw Mosaic GPU)."""

import functools

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp


def _kernel(m, n, k, swizzle):
  nk_tile = swizzle  # 8-bit elements

  def kernel(ctx, a, b, out, scratch):
    a_smem, b_smem, barriers = scratch
    ctx.async_copy(
        src_ref=a,
        dst_ref=a_smem,
        swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, nk_tile)),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=b,
        dst_ref=b_smem,
        swizzle=swizzle,
        gmem_transform=(
            mgpu.TileTransform((8, nk_tile)),
            mgpu.TransposeTransform((1, 0, 2, 3)),
        ),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    i32 = ir.IntegerType.get_signless(32)
    acc = mgpu.WGMMAAccumulator.zero(m, n, dtype=i32, is_signed=True)
    b_kmajor = memref_transpose(b_smem, (0, 1, 3, 2))
    acc = mgpu.wgmma(acc, a_smem, b_kmajor, swizzle=swizzle)
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  return kernel


@functools.partial(jax.jit, static_argnames=("swizzle",))
def u8_gram(pixels: jax.Array, codebook: jax.Array, swizzle: int = 128):
  """pixels: (m, k) uint8, codebook: (n, k) uint8 -> (m, n) int32."""
  pixels = pixels.astype(jnp.uint8)
  codebook = codebook.astype(jnp.uint8)
  (m, k), (n, _) = pixels.shape, codebook.shape
  b_tiled = tile_shape((n, k), (8, swizzle))
  scratch = [
      jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle)), jnp.uint8),
      jax.ShapeDtypeStruct((b_tiled[1], b_tiled[0], *b_tiled[2:]), jnp.uint8),
      mgpu.TMABarrier(2),
  ]
  out_shape = jax.ShapeDtypeStruct((m, n), jnp.int32)
  with mlir.make_ir_context(), ir.Location.unknown():
    f = mgpu.as_gpu_kernel(
        _kernel(m, n, k, swizzle), (1, 1, 1), (128, 1, 1),
        (pixels, codebook), out_shape, scratch,
    )
  return f(pixels, codebook)
