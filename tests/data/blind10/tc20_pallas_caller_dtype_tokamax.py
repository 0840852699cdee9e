"""Shared Blackwell MMA step for tokamax-style ragged/quantized ops.

Operand and accumulator dtypes are decided by the op that builds the scratch
buffers; this module only issues the MMA.
"""

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def tiled_swizzled_smem(shape, dtype, swizzle=128):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return plgpu.SMEM(
      shape,
      dtype,
      transforms=(
          plgpu.TilingTransform((8, elems)),
          plgpu.SwizzleTransform(swizzle),
      ),
  )


def acc_scratch(block_m, block_n, acc_dtype):
  packed = None if jnp.dtype(acc_dtype).itemsize == 4 else False
  return plgpu.TMEM((block_m, block_n), acc_dtype, packed=packed)


def mma_k_loop(
    lhs_smem,
    rhs_smem,
    acc_tmem,
    ready_barrier,
    consumed_barrier,
    *,
    num_k_iters: int,
    num_stages: int,
):
  """Issues one tcgen05 MMA per K step into `acc_tmem`."""

  def body(ki, _):
    slot = lax.rem(ki, num_stages)
    plgpu.barrier_wait(ready_barrier.at[slot])
    plgpu.tcgen05_mma(
        acc_tmem,
        lhs_smem.at[slot],
        rhs_smem.at[slot].T,
        consumed_barrier.at[slot],
        accumulate=ki > 0,
    )

  lax.fori_loop(0, num_k_iters, body, None)
