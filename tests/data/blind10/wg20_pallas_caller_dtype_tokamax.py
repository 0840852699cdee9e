"""Generic Hopper GEMM body shared by several tokamax-style ops.

The operand and accumulator dtypes are chosen by the op that instantiates
this body; this module does not fix them.
"""

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def tiled_swizzled_spec(shape, dtype, index_map, swizzle=128):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return plgpu.BlockSpec(
      shape,
      index_map,
      transforms=(
          plgpu.TilingTransform((8, elems)),
          plgpu.SwizzleTransform(swizzle),
      ),
  )


def gemm_body(
    lhs_gmem,
    rhs_gmem,
    *,
    block_m: int,
    block_n: int,
    block_k: int,
    acc_dtype,
    num_stages: int = 2,
):
  """Returns the (block_m, block_n) accumulator for this program's tile."""
  pid_m = lax.axis_index("m")
  pid_n = lax.axis_index("n")
  k = lhs_gmem.shape[1]

  def compute_acc(acc):
    def pipeline_body(_, lhs_smem, rhs_smem):
      plgpu.wgmma(acc, lhs_smem, rhs_smem.T)
      plgpu.wgmma_wait(1)

    plgpu.emit_pipeline(
        pipeline_body,
        grid=(k // block_k,),
        in_specs=[
            tiled_swizzled_spec((block_m, block_k), lhs_gmem.dtype,
                                lambda ki: (pid_m, ki)),
            tiled_swizzled_spec((block_n, block_k), rhs_gmem.dtype,
                                lambda ki: (pid_n, ki)),
        ],
        max_concurrent_steps=num_stages,
    )(lhs_gmem, rhs_gmem)
    return acc[...]

  return pl.run_scoped(compute_acc, plgpu.ACC((block_m, block_n), acc_dtype))
