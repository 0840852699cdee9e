"""Small bf16 and int8 matmul kernels sharing module-level layouts."""

import functools

import jax
from jax.experimental.pallas import mosaic_gpu as pgpu
import jax.numpy as jnp

# Layouts for the bf16 path, hoisted so the kernels below can share them.
LHS_LAYOUT = pgpu.Layout.MMA_LHS(jnp.bfloat16)
RHS_LAYOUT = pgpu.Layout.MMA_RHS(jnp.bfloat16)
ACC_LAYOUT = pgpu.Layout.MMA_ACC(jnp.bfloat16)

_PARAMS = pgpu.CompilerParams(lowering_semantics=pgpu.LoweringSemantics.Lane)


def bf16_matmul(a, b_t):
  m, _ = a.shape
  n, _ = b_t.shape

  @functools.partial(
      pgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      compiler_params=_PARAMS,
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = pgpu.layout_cast(jnp.zeros((m, n), jnp.float32), ACC_LAYOUT)
    x = pgpu.load(a_ref, layout=LHS_LAYOUT, optimized=False)
    y = pgpu.load(b_ref.T, layout=RHS_LAYOUT, optimized=False)
    o_ref[...] = pgpu.mma(acc, x, y)

  return kernel(a.astype(jnp.bfloat16), b_t.astype(jnp.bfloat16))


def int8_matmul(a, b_t):
  m, _ = a.shape
  n, _ = b_t.shape

  @functools.partial(
      pgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.int32),
      compiler_params=_PARAMS,
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = pgpu.layout_cast(jnp.zeros((m, n), jnp.int32), ACC_LAYOUT)
    x = pgpu.load(a_ref, layout=LHS_LAYOUT, optimized=False)
    y = pgpu.load(
        b_ref.T, layout=pgpu.Layout.MMA_RHS(jnp.int8), optimized=False
    )
    o_ref[...] = pgpu.mma(acc, x, y)

  return kernel(a.astype(jnp.int8), b_t.astype(jnp.int8))


def bf16_matmul_bias(a, b_t, bias: float):
  """Like bf16_matmul, but starts the accumulator from a scalar bias."""
  m, _ = a.shape
  n, _ = b_t.shape

  @functools.partial(
      pgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      compiler_params=_PARAMS,
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = jnp.full((m, n), bias, jnp.float32)
    acc = pgpu.layout_cast(acc, LHS_LAYOUT)
    x = pgpu.load(a_ref, layout=LHS_LAYOUT, optimized=False)
    y = pgpu.load(b_ref.T, layout=RHS_LAYOUT, optimized=False)
    o_ref[...] = pgpu.mma(acc, x, y)

  return kernel(a.astype(jnp.bfloat16), b_t.astype(jnp.bfloat16))


if __name__ == "__main__":
  a = jnp.ones((128, 128))
  b = jnp.ones((64, 128))
  print(bf16_matmul(a, b))
  print(int8_matmul(a, b))
  print(bf16_matmul_bias(a, b, 0.5))
