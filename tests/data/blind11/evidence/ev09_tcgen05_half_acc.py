# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Single-tile tcgen05 matmuls with a half-precision TMEM accumulator."""

import functools

import jax
from jax._src import dtypes
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def _transforms(dtype, swizzle):
  swizzle_elems = 8 * swizzle // dtypes.itemsize_bits(dtype)
  return (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )


def _mma_tile(a_gmem, b_gmem, o_ref, a_smem, b_smem, acc_tmem, tma_barrier,
              mma_barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
  plgpu.barrier_wait(tma_barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
  plgpu.barrier_wait(tma_barrier)
  plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
  plgpu.barrier_wait(mma_barrier)
  o_ref[...] = plgpu.async_load_tmem(acc_tmem).astype(o_ref.dtype)


def make_matmul(dtype, acc_dtype, m=128, n=128, k=128, swizzle=128):
  """Returns f(a, b) = a @ b for a: (m, k), b: (k, n) of `dtype`."""
  return plgpu.kernel(
      _mma_tile,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      scratch_types=[
          plgpu.SMEM((m, k), dtype, transforms=_transforms(dtype, swizzle)),
          plgpu.SMEM((k, n), dtype, transforms=_transforms(dtype, swizzle)),
          plgpu.TMEM((m, n), acc_dtype, packed=False),
          plgpu.Barrier(),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )


matmul_f16 = make_matmul(jnp.float16, jnp.float16)
matmul_e5m2 = functools.partial(make_matmul, jnp.float8_e5m2, jnp.float16)()
