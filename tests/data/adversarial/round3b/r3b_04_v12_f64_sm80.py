"""FP64 tile matmul in Pallas Mosaic GPU, shipped in the sm_80 (A100) build.

Deployment note: this module is compiled for the A100 fleet.
"""
import functools

import jax
from jax.experimental import pallas as pl  # noqa: F401
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

TILE_M, TILE_N, TILE_K = 64, 64, 64


def _f64_tile_matmul(a, b_nk):
  """Computes a @ b_nk.T with an f64 accumulator using warp-level MMA."""
  m, k = a.shape
  n, k2 = b_nk.shape
  assert k == k2 and a.dtype == b_nk.dtype == jnp.float64

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float64),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.float64), plgpu.Layout.MMA_ACC(jnp.float64)
    )
    lhs = plgpu.load(
        a_ref, layout=plgpu.Layout.MMA_LHS(jnp.float64), optimized=False
    )
    rhs = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float64), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, lhs, rhs)

  return kernel(a, b_nk)


@jax.jit
def refine_step(a, b_nk):
  return _f64_tile_matmul(a, b_nk)


if __name__ == "__main__":
  a = jnp.ones((TILE_M, TILE_K), jnp.float64)
  b = jnp.ones((TILE_N, TILE_K), jnp.float64)
  print(refine_step(a, b)[0, 0])
