"""Raw Mosaic GPU co-occurrence counts: the author made the accumulator unsigned because counts are
never negative, but PTX has no unsigned wgmma accumulator."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import nvvm

M, N, K = 128, 64, 256
OUT_DTYPE = jnp.uint32
TILING = (8, 128)  # 8-bit elements: 128 bytes per tile row


def kernel(ctx, a_gmem, b_gmem, out_gmem, smem):
  a_smem, b_smem, barrier = smem  # both operands tiled (8, 128) in SMEM
  tile = mgpu.TileTransform(TILING)
  ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=128, gmem_transform=tile, barrier=barrier)
  ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=128, gmem_transform=tile, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(
      M, N, utils.dtype_to_ir_type(OUT_DTYPE), is_signed=utils.is_signed(OUT_DTYPE))
  acc = mgpu.wgmma(acc, a_smem, utils.memref_transpose(b_smem, (1, 0, 3, 2)))
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out_gmem, optimized=False)


def build():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
        jax.ShapeDtypeStruct((M, N), OUT_DTYPE),
        (
            jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.int8),
            jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.int8),
            mgpu.Barrier(arrival_count=2),  # one arrival per TMA copy
        ),
    )


def main():
  rng = np.random.default_rng(0)
  # Per-document term counts, saturated to the int8 range (never negative).
  a = np.minimum(rng.poisson(20.0, (M, K)), 127).astype(np.int8)
  b = np.minimum(rng.poisson(20.0, (N, K)), 127).astype(np.int8)
  out = np.asarray(build()(a, b))
  ref = (a.astype(np.int64) @ b.astype(np.int64).T).astype(OUT_DTYPE)
  np.testing.assert_array_equal(out, ref)
  print("wgmma co-occurrence counts: OK, max count", out.max())


if __name__ == "__main__":
  main()
