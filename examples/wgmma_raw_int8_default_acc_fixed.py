"""A raw Mosaic GPU int8 x int8 tile (jax-test style): the accumulator is made signed int32,
as an int8 wgmma requires."""

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir

M, N, K = 64, 128, 128
SWIZZLE = 128


def kernel(ctx, a_gmem, b_gmem, out_gmem, smem):
  a_smem, b_smem, barrier = smem
  ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=SWIZZLE, barrier=barrier)
  ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=SWIZZLE, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N, ir.IntegerType.get_signless(32), is_signed=True)
  acc = mgpu.wgmma(acc, a_smem, utils.memref_transpose(b_smem, (1, 0)), swizzle=SWIZZLE)
  acc.value.store_untiled(out_gmem, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
    jax.ShapeDtypeStruct((M, N), jnp.int32),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8), mgpu.Barrier(arrival_count=1)),
)
