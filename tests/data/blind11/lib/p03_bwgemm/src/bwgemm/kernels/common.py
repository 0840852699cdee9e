"""Shared building blocks for the Blackwell (tcgen05) kernels."""

import functools

import jax
from jax import numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def smem_transforms(dtype, swizzle=128):
  swizzle_elems = 8 * swizzle // (jnp.dtype(dtype).itemsize * 8)
  return (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )


def tcgen05_tile(a, b, *, acc_dtype, out_dtype):
  """One-CTA ``a @ b`` with the accumulator kept in tensor memory."""
  (m, k), (_, n) = a.shape, b.shape
  transforms = smem_transforms(a.dtype)

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), out_dtype),
      scratch_types=[
          plgpu.SMEM((m, k), a.dtype, transforms=transforms),
          plgpu.SMEM((k, n), b.dtype, transforms=transforms),
          plgpu.SMEM((m, n), out_dtype, transforms=smem_transforms(out_dtype)),
          plgpu.TMEM((m, n), acc_dtype, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, out_smem, acc_tmem,
             load_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, load_barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, load_barrier)
    plgpu.barrier_wait(load_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    out_smem[...] = plgpu.async_load_tmem(acc_tmem).astype(out_dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(out_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(a, b)
