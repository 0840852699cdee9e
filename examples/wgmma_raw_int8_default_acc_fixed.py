"""A raw Mosaic GPU int8 x int8 tile (jax-test style): the accumulator is made signed int32,
as an int8 wgmma requires."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import nvvm

M, N, K = 64, 128, 128
SWIZZLE = 128
TILING = (8, SWIZZLE)  # 8-bit elements: 128 bytes per tile row


def kernel(ctx, a_gmem, b_gmem, out_gmem, smem):
  a_smem, b_smem, barrier = smem  # both operands tiled (8, 128) in SMEM
  tile = mgpu.TileTransform(TILING)
  ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=SWIZZLE, gmem_transform=tile, barrier=barrier)
  ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=SWIZZLE, gmem_transform=tile, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N, ir.IntegerType.get_signless(32), is_signed=True)
  acc = mgpu.wgmma(acc, a_smem, utils.memref_transpose(b_smem, (1, 0, 3, 2)), swizzle=SWIZZLE)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out_gmem, optimized=False)


def build():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
        jax.ShapeDtypeStruct((M, N), jnp.int32),
        (
            jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.int8),
            jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.int8),
            mgpu.Barrier(arrival_count=2),  # one arrival per TMA copy
        ),
    )


def main():
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (M, K)).astype(np.int8)
  b = rng.integers(-128, 128, (N, K)).astype(np.int8)  # stored (N, K): B is K-major
  out = np.asarray(build()(a, b))
  np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32).T)
  print("wgmma int8 tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
