"""Tensor-memory matmul kernels for sm_100."""

import functools

import jax
from jax import numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def _transforms(dtype, swizzle=128):
  swizzle_elems = 8 * swizzle // jnp.dtype(dtype).itemsize // 8
  return (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )


def matmul(a, b, *, acc_dtype=jnp.float32):
  """``a @ b`` for one CTA tile; the result is returned in ``acc_dtype``."""
  (m, k), (_, n) = a.shape, b.shape

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      scratch_types=[
          plgpu.SMEM((m, k), a.dtype, transforms=_transforms(a.dtype)),
          plgpu.SMEM((k, n), b.dtype, transforms=_transforms(b.dtype)),
          plgpu.SMEM((m, n), acc_dtype, transforms=_transforms(acc_dtype)),
          plgpu.TMEM((m, n), acc_dtype, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, acc_tmem,
             tma_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    o_smem[...] = plgpu.async_load_tmem(acc_tmem)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(a, b)


def quantized_matmul(a_q, b_q, scale, *, acc_dtype=jnp.float32):
  """``(a_q @ b_q) * scale`` for 8-bit quantized operands."""
  (m, k), (_, n) = a_q.shape, b_q.shape

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      scratch_types=[
          plgpu.SMEM((m, k), a_q.dtype, transforms=_transforms(a_q.dtype)),
          plgpu.SMEM((k, n), b_q.dtype, transforms=_transforms(b_q.dtype)),
          plgpu.TMEM((m, n), acc_dtype, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(a_gmem, b_gmem, s_gmem, o_gmem, a_smem, b_smem, acc_tmem,
             tma_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    acc = plgpu.async_load_tmem(acc_tmem)
    o_gmem[...] = acc.astype(jnp.float32) * s_gmem[...]

  return kernel(a_q, b_q, scale)
