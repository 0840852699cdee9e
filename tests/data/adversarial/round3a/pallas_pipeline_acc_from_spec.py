"""bf16 GEMM with a software-pipelined K loop over tiled+swizzled SMEM blocks.

a: (M, K) bf16, b: (N, K) bf16, out: (M, N) f32 = a @ b.T
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 512, 512, 1024
BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
DTYPE = jnp.bfloat16
SWIZZLE = 128
_TRANSFORMS = (
    plgpu.TilingTransform((8, SWIZZLE // jnp.dtype(DTYPE).itemsize)),
    plgpu.SwizzleTransform(SWIZZLE),
)


def matmul(a, b):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      grid=(M // BLOCK_M, N // BLOCK_N),
      grid_names=("m", "n"),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )
  def kernel(a_gmem, b_gmem, o_gmem):
    mi = lax.axis_index("m")
    ni = lax.axis_index("n")
    a_spec = plgpu.BlockSpec(
        (BLOCK_M, BLOCK_K), lambda k: (mi, k), transforms=_TRANSFORMS
    )
    b_spec = plgpu.BlockSpec(
        (BLOCK_N, BLOCK_K), lambda k: (ni, k), transforms=_TRANSFORMS
    )

    def body(_, a_smem, b_smem, acc):
      a = plgpu.load(a_smem, layout=plgpu.Layout.MMA_LHS(DTYPE))
      b = plgpu.load(b_smem.T, layout=plgpu.Layout.MMA_RHS(DTYPE))
      return plgpu.mma(acc, a, b)

    acc = plgpu.layout_cast(
        jnp.zeros(a_spec.block_shape, jnp.float32), plgpu.Layout.MMA_ACC(DTYPE)
    )
    acc = plgpu.emit_pipeline(
        body,
        grid=(K // BLOCK_K,),
        in_specs=[a_spec, b_spec],
        max_concurrent_steps=3,
        init_carry=acc,
    )(a_gmem, b_gmem)
    o_gmem[pl.ds(mi * BLOCK_M, BLOCK_M), pl.ds(ni * BLOCK_N, BLOCK_N)] = acc

  return kernel(a, b)


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (M, K)), DTYPE)
  b = jnp.asarray(rng.uniform(-1, 1, (N, K)), DTYPE)
  ref = a.astype(jnp.float32) @ b.astype(jnp.float32).T
  np.testing.assert_allclose(matmul(a, b), ref, atol=5e-2, rtol=1e-2)
