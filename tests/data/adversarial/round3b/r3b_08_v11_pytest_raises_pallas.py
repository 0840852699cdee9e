"""pytest suite for the Pallas warp-MMA wrapper (jax 0.11)."""
import functools

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np
import pytest

M, N, K = 128, 64, 64


def _mma_kernel(a_dtype, b_dtype, acc_dtype):
  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), acc_dtype)
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((M, N), acc_dtype), plgpu.Layout.MMA_ACC(a_dtype)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(a_dtype), optimized=False)
    b = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(b_dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, a, b)

  return kernel


def test_bf16():
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (M, K)), jnp.bfloat16)
  b = jnp.asarray(rng.uniform(-1, 1, (N, K)), jnp.bfloat16)
  out = _mma_kernel(jnp.bfloat16, jnp.bfloat16, jnp.float32)(a, b)
  ref = a.astype(jnp.float32) @ b.astype(jnp.float32).T
  np.testing.assert_allclose(out, ref, atol=1e-2, rtol=1e-2)


def test_mixed_half_types_rejected():
  a = jnp.zeros((M, K), jnp.bfloat16)
  b = jnp.zeros((N, K), jnp.float16)
  with pytest.raises(TypeError, match="Operand dtypes must match"):

    @functools.partial(
        plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32)
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.bfloat16)
      )
      lhs = plgpu.load(
          a_ref, layout=plgpu.Layout.MMA_LHS(jnp.bfloat16), optimized=False
      )
      rhs = plgpu.load(
          b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float16), optimized=False
      )
      o_ref[...] = plgpu.mma(acc, lhs, rhs)

    kernel(a, b)


def test_f32_inputs():
  # Keep activations in f32 to avoid a cast before the projection.
  rng = np.random.default_rng(1)
  a = jnp.asarray(rng.uniform(-1, 1, (M, K)), jnp.float32)
  b = jnp.asarray(rng.uniform(-1, 1, (N, K)), jnp.float32)

  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32)
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.float32)
    )
    lhs = plgpu.load(
        a_ref, layout=plgpu.Layout.MMA_LHS(jnp.float32), optimized=False
    )
    rhs = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float32), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, lhs, rhs)

  np.testing.assert_allclose(kernel(a, b), a @ b.T, atol=1e-4)
