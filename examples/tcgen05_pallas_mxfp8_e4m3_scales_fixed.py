"""An MXFP8 (block-scaled e4m3) GEMM tile on Blackwell in Pallas, ported from an NVFP4 kernel,
with the float8_e8m0fnu scales MXFP8 reads, one per 32 elements of K."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 256
BLOCK = 32  # one scale per 32 elements of K (MXFP8)
SCALE_DTYPE = jnp.float8_e8m0fnu  # MXFP8: power-of-two scales


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 reads from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def scaled_matmul(x, y, x_scale, y_scale):
  swizzle = 128
  transforms = (plgpu.TilingTransform((8, swizzle)), plgpu.SwizzleTransform(swizzle))

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      scratch_types=[
          plgpu.SMEM((M, K), x.dtype, transforms=transforms),
          plgpu.SMEM((N, K), y.dtype, transforms=transforms),
          plgpu.SMEM(scale_tiles(M), SCALE_DTYPE),
          plgpu.SMEM(scale_tiles(N), SCALE_DTYPE),
          plgpu.TMEM((M, N), jnp.float32),
          plgpu.TMEM((M, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((N, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.Barrier(num_arrivals=4),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(x_gmem, y_gmem, xs_gmem, ys_gmem, out_gmem, x_smem, y_smem, xs_smem, ys_smem,
             acc_tmem, xs_tmem, ys_tmem, tma_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(y_gmem, y_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(xs_gmem, xs_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(ys_gmem, ys_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.async_copy_scales_to_tmem(xs_smem, xs_tmem)
    plgpu.async_copy_scales_to_tmem(ys_smem, ys_tmem)
    plgpu.tcgen05_mma(
        acc_tmem,
        x_smem,
        plgpu.transpose_ref(y_smem, (1, 0)),
        a_scale=xs_tmem,
        b_scale=ys_tmem,
        accumulate=False,
    )
    plgpu.tcgen05_commit_arrive(mma_barrier)
    plgpu.barrier_wait(mma_barrier)
    out_gmem[...] = plgpu.async_load_tmem(acc_tmem)

  return kernel(x, y, x_scale, y_scale)


x = jnp.ones((M, K), jnp.float8_e4m3fn)
y = jnp.ones((N, K), jnp.float8_e4m3fn)
x_scale = jnp.ones(scale_tiles(M), SCALE_DTYPE)
y_scale = jnp.ones(scale_tiles(N), SCALE_DTYPE)
scaled_matmul(x, y, x_scale, y_scale)
