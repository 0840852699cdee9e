"""Co-occurrence counts from uint8 one-hot/count matrices via warp MMA."""

import functools

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

# Counts are never negative, so keep everything unsigned end to end.
COUNT_DTYPE = jnp.uint8
ACC_DTYPE = jnp.uint32

TILE_M, TILE_N, TILE_K = 64, 32, 256


def _zeros_acc():
  return plgpu.layout_cast(
      jnp.zeros((TILE_M, TILE_N), ACC_DTYPE), plgpu.Layout.MMA_ACC(COUNT_DTYPE)
  )


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((TILE_M, TILE_N), ACC_DTYPE),
    compiler_params=plgpu.CompilerParams(
        lowering_semantics=plgpu.LoweringSemantics.Lane
    ),
)
def cooccurrence_kernel(lhs_ref, rhs_ref, out_ref):
  lhs = plgpu.load(
      lhs_ref, layout=plgpu.Layout.MMA_LHS(COUNT_DTYPE), optimized=False
  )
  rhs = plgpu.load(
      rhs_ref.T, layout=plgpu.Layout.MMA_RHS(COUNT_DTYPE), optimized=False
  )
  out_ref[...] = plgpu.mma(_zeros_acc(), lhs, rhs)


def cooccurrence(lhs_counts: jax.Array, rhs_counts: jax.Array) -> jax.Array:
  """lhs_counts: (64, 256) uint8, rhs_counts: (32, 256) uint8."""
  return cooccurrence_kernel(
      lhs_counts.astype(COUNT_DTYPE), rhs_counts.astype(COUNT_DTYPE)
  )


if __name__ == "__main__":
  a = jnp.ones((TILE_M, TILE_K), jnp.uint8)
  b = jnp.ones((TILE_N, TILE_K), jnp.uint8)
  print(cooccurrence(a, b))
