"""Raw Mosaic GPU co-occurrence counts: the author made the accumulator unsigned because counts are
never negative, but PTX has no unsigned wgmma accumulator."""

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 64, 256
OUT_DTYPE = jnp.uint32


def kernel(ctx, a_gmem, b_gmem, out_gmem, smem):
  a_smem, b_smem, barrier = smem
  ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=128, barrier=barrier)
  ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=128, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(
      M, N, utils.dtype_to_ir_type(OUT_DTYPE), is_signed=utils.is_signed(OUT_DTYPE))
  acc = mgpu.wgmma(acc, a_smem, utils.memref_transpose(b_smem, (1, 0)))
  acc.value.store_untiled(out_gmem, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
    jax.ShapeDtypeStruct((M, N), OUT_DTYPE),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8), mgpu.Barrier(arrival_count=1)),
)
