"""Raw Mosaic GPU attention-style tile: the probabilities are cast to the
values' bfloat16, as wgmma needs A and B of one element type."""

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu

M, N, K = 64, 64, 64
P_DTYPE = jnp.bfloat16
V_DTYPE = jnp.bfloat16


def kernel(ctx, p_gmem, v_gmem, out_gmem, smem):
  p_smem, v_smem, barrier = smem
  ctx.async_copy(src_ref=p_gmem, dst_ref=p_smem, swizzle=128, barrier=barrier)
  ctx.async_copy(src_ref=v_gmem, dst_ref=v_smem, swizzle=128, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N)
  acc = mgpu.wgmma(acc, p_smem, v_smem)
  acc.value.store_untiled(out_gmem, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), P_DTYPE), jax.ShapeDtypeStruct((K, N), V_DTYPE)),
    jax.ShapeDtypeStruct((M, N), jnp.float32),
    (jax.ShapeDtypeStruct((M, K), P_DTYPE), jax.ShapeDtypeStruct((K, N), V_DTYPE), mgpu.Barrier(arrival_count=1)),
)
