"""Raw Mosaic GPU: float8 A in TMEM allocated with packing=2 (two per cell), which no 8-bit TMEM
ref can have."""

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05, utils

M, N, K = 128, 128, 128


def kernel(ctx, lhs, rhs, out, scratch):
  rhs_smem, _barrier, mma_barrier, acc, lhs_tmem = scratch
  with mgpu.single_thread():
    tcgen05.mma(acc, lhs_tmem, utils.memref_transpose(rhs_smem, (1, 0, 3, 2)), accumulate=False)
    tcgen05.commit_arrive(mma_barrier)


def run(x, y):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), (8, 128)), jnp.float8_e4m3fn),
      mgpu.Barrier(1),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), jnp.float32),
      mgpu.TMEM((M, K), jnp.float8_e4m3fn, packing=2),
  ]
  out = jax.ShapeDtypeStruct((M, N), jnp.float32)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y), out, scratch)(x, y)


run(jnp.ones((M, K), jnp.float8_e4m3fn), jnp.ones((N, K), jnp.float8_e4m3fn))
