"""MMA710, Pallas: MXFP8 operands whose A scales are float8_e8m0fnu and B scales float8_e4m3fn.

Both scales must be of one type: the lowering raises `B scale dtype mismatch: expected
f8E8M0FNU (same as A), got f8E4M3FN`."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 256
BLOCK = 32
TILING = (8, 128)  # 8-bit elements: 128-byte rows
transforms = (plgpu.TilingTransform(TILING), plgpu.SwizzleTransform(128))


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 copies from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
    scratch_types=[
        plgpu.SMEM((M, K), jnp.float8_e4m3fn, transforms=transforms),
        plgpu.SMEM((N, K), jnp.float8_e4m3fn, transforms=transforms),
        plgpu.SMEM(scale_tiles(M), jnp.float8_e8m0fnu),
        plgpu.SMEM(scale_tiles(N), jnp.float8_e4m3fn),
        plgpu.TMEM((M, N), jnp.float32),
        plgpu.TMEM((M, K // BLOCK), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
        plgpu.TMEM((N, K // BLOCK), jnp.float8_e4m3fn, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
        plgpu.Barrier(num_arrivals=4),
        plgpu.Barrier(orders_tensor_core=True),
    ],
)
def kernel(a_gmem, b_gmem, as_gmem, bs_gmem, out_gmem, a_smem, b_smem, as_smem, bs_smem, acc_tmem, as_tmem, bs_tmem, tma_barrier, mma_barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
  plgpu.copy_gmem_to_smem(as_gmem, as_smem, tma_barrier)
  plgpu.copy_gmem_to_smem(bs_gmem, bs_smem, tma_barrier)
  plgpu.barrier_wait(tma_barrier)
  plgpu.async_copy_scales_to_tmem(as_smem, as_tmem)
  plgpu.async_copy_scales_to_tmem(bs_smem, bs_tmem)
  plgpu.tcgen05_mma(acc_tmem, a_smem, plgpu.transpose_ref(b_smem, (1, 0)), a_scale=as_tmem, b_scale=bs_tmem, accumulate=False)
  plgpu.tcgen05_commit_arrive(mma_barrier)
  plgpu.barrier_wait(mma_barrier)
  out_gmem[...] = plgpu.async_load_tmem(acc_tmem)


kernel(jnp.ones((M, K), jnp.float8_e4m3fn), jnp.ones((N, K), jnp.float8_e4m3fn), jnp.ones(scale_tiles(M), jnp.float8_e8m0fnu), jnp.ones(scale_tiles(N), jnp.float8_e4m3fn))
