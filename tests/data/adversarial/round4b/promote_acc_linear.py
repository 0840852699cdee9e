"""Fused linear layer (``act(x @ w.T + b)``) on the Ampere-style MMA path."""

from __future__ import annotations

import functools
from typing import Callable

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

Activation = Callable[[jax.Array], jax.Array]

_ACTIVATIONS: dict[str, Activation] = {
    "none": lambda y: y,
    "relu": jax.nn.relu,
    "gelu": functools.partial(jax.nn.gelu, approximate=True),
    "silu": jax.nn.silu,
}


def _build_linear_kernel(m, n, k, *, dtype, acc_dtype, block_m=128,
                         block_n=128, block_k=64, **kernel_kwargs):
  grid = (m // block_m, n // block_n)

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=grid,
      grid_names=("m", "n"),
      **kernel_kwargs,
  )
  def kernel(x_ref, w_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * block_m, block_m)
    ns = pl.ds(lax.axis_index("n") * block_n, block_n)
    lhs_layout = plgpu.Layout.MMA_LHS(dtype)
    rhs_layout = plgpu.Layout.MMA_RHS(dtype)

    def body(ki, acc):
      ks = pl.ds(ki * block_k, block_k)
      a = plgpu.load(x_ref.at[ms, ks], layout=lhs_layout, optimized=False)
      b = plgpu.load(w_ref.at[ns, ks].T, layout=rhs_layout, optimized=False)
      return plgpu.mma(acc, a, b)

    acc0 = plgpu.layout_cast(
        jnp.zeros((block_m, block_n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )
    o_ref[ms, ns] = lax.fori_loop(0, k // block_k, body, acc0)

  return kernel


@functools.partial(
    jax.jit, static_argnames=("activation", "block_m", "block_n", "block_k")
)
def linear(x: jax.Array, w: jax.Array, bias: jax.Array | None = None, *,
           activation: str = "none", block_m: int = 128, block_n: int = 128,
           block_k: int = 64) -> jax.Array:
  """``activation(x @ w.T + bias)`` with x: (M, K), w: (N, K), bias: (N,)."""
  m, k = x.shape
  n, k2 = w.shape
  if k != k2:
    raise ValueError(f"contraction mismatch: {x.shape} vs {w.shape}")
  compute_dtype = jnp.promote_types(x.dtype, w.dtype)
  x = x.astype(compute_dtype)
  w = w.astype(compute_dtype)
  # Accumulate in the bias precision (biases are usually kept in fp32) so the
  # epilogue add does not lose bits.
  acc_dtype = jnp.promote_types(
      compute_dtype, bias.dtype if bias is not None else compute_dtype
  )
  kernel = _build_linear_kernel(
      m, n, k, dtype=compute_dtype, acc_dtype=acc_dtype,
      block_m=block_m, block_n=block_n, block_k=block_k,
  )
  y = kernel(x, w)
  if bias is not None:
    y = y + bias.astype(acc_dtype)[None, :]
  return _ACTIVATIONS[activation](y).astype(x.dtype)


if __name__ == "__main__":
  x = jnp.ones((256, 1024), jnp.bfloat16)
  w = jnp.ones((512, 1024), jnp.bfloat16)
  b = jnp.zeros((512,), jnp.bfloat16)
  print(linear(x, w).dtype)
  print(linear(x, w, b, activation="gelu").shape)
