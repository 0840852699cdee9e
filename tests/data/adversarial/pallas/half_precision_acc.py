"""Register-lean matmul variants: keep the accumulator in 16 bits."""

import functools

import jax
import jax.experimental.pallas.mosaic_gpu as plgpu
import jax.numpy as jnp

_LANE = plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)


def small_matmul(x: jax.Array, y_t: jax.Array) -> jax.Array:
  """Returns x @ y_t.T with a float16 accumulator to halve register use.

  x: (M, K), y_t: (N, K); both of the same (caller-chosen) 16-bit dtype.
  """
  (m, k), (n, _) = x.shape, y_t.shape
  dtype = x.dtype

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float16),
      compiler_params=_LANE,
  )
  def kernel(x_ref, y_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.float16), plgpu.Layout.MMA_ACC(dtype)
    )
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(y_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  return kernel(x, y_t)


def _make_bf16_kernel(acc_dtype, m=128, n=64, k=64):
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.full((m, n), 0, acc_dtype), plgpu.Layout.MMA_ACC(jnp.bfloat16)
    )
    a = plgpu.load(
        a_ref, layout=plgpu.Layout.MMA_LHS(jnp.bfloat16), optimized=False
    )
    b = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.bfloat16), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.bfloat16),
      compiler_params=_LANE,
  )


def sweep():
  x = jnp.ones((128, 64), jnp.bfloat16)
  y = jnp.ones((64, 64), jnp.bfloat16)
  results = {}
  for acc_dtype in (jnp.float32, jnp.bfloat16):
    results[jnp.dtype(acc_dtype).name] = _make_bf16_kernel(acc_dtype)(x, y)
  return results
