"""W8A8 matmul with per-row / per-column scales on the warp MMA path."""

import functools

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

BLOCK_M = 128
BLOCK_N = 64
BLOCK_K = 128


def _quant_matmul_kernel(x_ref, w_ref, xs_ref, ws_ref, o_ref):
  # Accumulate straight into float32 so the dequantization below is a plain
  # elementwise multiply.
  acc = plgpu.layout_cast(
      jnp.zeros((BLOCK_M, BLOCK_N), dtype=jnp.float32),
      plgpu.Layout.MMA_ACC(jnp.int8),
  )
  x = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8), optimized=False)
  w = plgpu.load(
      w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8), optimized=False
  )
  acc = plgpu.mma(acc, x, w)
  o_ref[...] = (acc * xs_ref[...] * ws_ref[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("out_dtype",))
def quant_matmul(x_q, w_q, x_scale, w_scale, out_dtype=jnp.bfloat16):
  """x_q: (M, K) int8, w_q: (N, K) int8, scales: (M, 1) and (1, N) f32."""
  assert x_q.dtype == jnp.int8 and w_q.dtype == jnp.int8
  return pl.pallas_call(
      _quant_matmul_kernel,
      out_shape=jax.ShapeDtypeStruct((BLOCK_M, BLOCK_N), out_dtype),
      in_specs=[
          plgpu.BlockSpec(memory_space=plgpu.SMEM),
          plgpu.BlockSpec(memory_space=plgpu.SMEM),
          plgpu.BlockSpec(memory_space=plgpu.SMEM),
          plgpu.BlockSpec(memory_space=plgpu.SMEM),
      ],
      out_specs=plgpu.BlockSpec(memory_space=plgpu.SMEM),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )(x_q, w_q, x_scale, w_scale)


if __name__ == "__main__":
  kx, kw = jax.random.split(jax.random.key(0))
  x_q = jax.random.randint(kx, (BLOCK_M, BLOCK_K), -128, 128, jnp.int8)
  w_q = jax.random.randint(kw, (BLOCK_N, BLOCK_K), -128, 128, jnp.int8)
  xs = jnp.full((BLOCK_M, 1), 0.01, jnp.float32)
  ws = jnp.full((1, BLOCK_N), 0.02, jnp.float32)
  print(quant_matmul(x_q, w_q, xs, ws))
