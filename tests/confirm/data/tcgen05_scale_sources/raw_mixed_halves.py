"""MMA709, raw: bfloat16 activations times float16 weights.

tcgen05 multiplies A and B of one element type: `tcgen05.mma()` raises `MMA requires A and B
to have the same element type, ...; got: bf16 and f16`."""

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 128
SWIZZLE = 128
TILING = (8, SWIZZLE // 2)  # 16-bit elements: 64 per 128-byte row


def kernel(ctx, lhs, rhs, out, scratch):
  lhs_smem, rhs_smem, barriers, mma_barrier, acc = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(src_ref=src, dst_ref=dst, swizzle=SWIZZLE,
                   gmem_transform=mgpu.TileTransform(TILING), barrier=barrier)
    barrier.wait()
  with mgpu.single_thread():
    tcgen05.mma(
        acc,
        lhs_smem,
        mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build():
  x = jax.ShapeDtypeStruct((M, K), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((N, K), jnp.float16)
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.bfloat16),
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.float16),
      mgpu.Barrier(1, num_barriers=2),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), jnp.float32),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, w), out_shape, scratch)
