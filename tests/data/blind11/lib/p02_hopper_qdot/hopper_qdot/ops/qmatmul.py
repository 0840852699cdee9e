"""Single-tile integer matmul on Hopper tensor cores."""

import functools

import jax
from jax import numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _smem_transforms(dtype, swizzle=128):
  swizzle_elems = 8 * swizzle // (jnp.dtype(dtype).itemsize * 8)
  return (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )


def qmatmul(x, w, *, out_dtype=jnp.int32):
  """Computes ``x @ w.T`` for 8-bit ``x: (m, k)`` and ``w: (n, k)``."""
  m, k = x.shape
  n, k2 = w.shape
  if k != k2:
    raise ValueError(f"Contraction mismatch: {x.shape} vs {w.shape}")
  if x.dtype != w.dtype:
    raise ValueError(f"Operand dtypes differ: {x.dtype} vs {w.dtype}")
  transforms = _smem_transforms(x.dtype)

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), out_dtype),
      scratch_types=[
          plgpu.SMEM((m, k), x.dtype, transforms=transforms),
          plgpu.SMEM((n, k), w.dtype, transforms=transforms),
          plgpu.Barrier(num_arrivals=2),
      ],
  )
  def kernel(x_gmem, w_gmem, o_gmem, x_smem, w_smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
    plgpu.copy_gmem_to_smem(w_gmem, w_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, x_smem, plgpu.transpose_ref(w_smem, (1, 0)))
      return acc_ref[...]

    o_gmem[...] = pl.run_scoped(scope, plgpu.ACC((m, n), out_dtype))

  return kernel(x, w)
