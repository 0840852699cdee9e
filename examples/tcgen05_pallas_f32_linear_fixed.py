"""A float32 linear layer on Blackwell: bf16 operands into the float32 accumulator."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 128, 64
ACC_DTYPE = jnp.float32
OUT_DTYPE = jnp.float32


def matmul(a, b):
  swizzle = 128
  transforms = (
      plgpu.TilingTransform((8, swizzle // jnp.dtype(a.dtype).itemsize)),
      plgpu.SwizzleTransform(swizzle),
  )

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((TILE_M, TILE_N), OUT_DTYPE),
      scratch_types=[
          plgpu.SMEM((TILE_M, TILE_K), a.dtype, transforms=transforms),
          plgpu.SMEM((TILE_K, TILE_N), b.dtype, transforms=transforms),
          plgpu.TMEM((TILE_M, TILE_N), ACC_DTYPE, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
          plgpu.SMEM((TILE_M, TILE_N), OUT_DTYPE),
      ],
  )
  def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier, out_smem):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    out_smem[...] = plgpu.async_load_tmem(acc_tmem).astype(OUT_DTYPE)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(out_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(a, b)


x = jnp.ones((TILE_M, TILE_K), jnp.float32)
w = jnp.ones((TILE_K, TILE_N), jnp.float32)
matmul(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))
