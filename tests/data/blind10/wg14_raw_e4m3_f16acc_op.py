"""FP8 (e4m3) inference GEMM for Hopper with an f16 accumulator."""

import functools

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp


def _fp8_kernel(m, n, swizzle):
  nk_tile = swizzle

  def kernel(ctx, a, b, out, scratch):
    a_smem, b_smem, barriers = scratch
    ctx.async_copy(
        src_ref=a, dst_ref=a_smem, swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, nk_tile)),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=b, dst_ref=b_smem, swizzle=swizzle,
        gmem_transform=(
            mgpu.TileTransform((8, nk_tile)),
            mgpu.TransposeTransform((1, 0, 2, 3)),
        ),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    f16 = ir.F16Type.get()
    acc = mgpu.WGMMAAccumulator.zero(m, n, dtype=f16)
    acc = mgpu.wgmma(
        acc, a_smem, memref_transpose(b_smem, (0, 1, 3, 2)), swizzle=swizzle
    )
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  return kernel


@functools.partial(jax.jit, static_argnames=("swizzle",))
def fp8_gemm(a, b, swizzle=128):
  """a: (m, k) e4m3, b: (n, k) e4m3 (weights stored K-major)."""
  a = a.astype(jnp.float8_e4m3fn)
  b = b.astype(jnp.float8_e4m3fn)
  (m, k), (n, _) = a.shape, b.shape
  b_tiled = tile_shape((n, k), (8, swizzle))
  scratch = [
      jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle)), jnp.float8_e4m3fn),
      jax.ShapeDtypeStruct((b_tiled[1], b_tiled[0], *b_tiled[2:]), jnp.float8_e4m3fn),
      mgpu.TMABarrier(2),
  ]
  out_shape = jax.ShapeDtypeStruct((m, n), jnp.float16)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        _fp8_kernel(m, n, swizzle), (1, 1, 1), (128, 1, 1), (a, b), out_shape,
        scratch,
    )(a, b)
