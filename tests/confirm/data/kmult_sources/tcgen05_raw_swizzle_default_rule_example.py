"""MMA716's raw rule example (rules/mma7xx.toml): operands staged with swizzle=64, tcgen05.mma left at
its default 128."""

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 32
SWIZZLE = 64
TILING = (8, SWIZZLE // 2)  # 64-byte rows: 32 bf16


def kernel(ctx, a, b, out, scratch):
  a_smem, b_smem, barriers, mma_barrier, acc = scratch
  for src, dst, barrier in ((a, a_smem, barriers[0]), (b, b_smem, barriers[1])):
    ctx.async_copy(src_ref=src, dst_ref=dst, swizzle=SWIZZLE,
                   gmem_transform=mgpu.TileTransform(TILING), barrier=barrier)
  barriers[0].wait()
  barriers[1].wait()
  with mgpu.single_thread():
    tcgen05.mma(acc, a_smem, mgpu.memref_transpose(b_smem, (1, 0, 3, 2)), accumulate=False)  # error: [MMA716]
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


with mlir.make_ir_context(), ir.Location.unknown():
  mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), jnp.bfloat16), jax.ShapeDtypeStruct((N, K), jnp.bfloat16)),
      jax.ShapeDtypeStruct((M, N), jnp.float32),
      [
          jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.bfloat16),
          jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.bfloat16),
          mgpu.Barrier(1, num_barriers=2),
          mgpu.Barrier(1),
          mgpu.TMEM((M, N), jnp.float32),
      ],
  )
