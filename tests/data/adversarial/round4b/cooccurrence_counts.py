"""Exact co-occurrence counts from uint8 count matrices.

``counts[i, j] = sum_k a[i, k] * b[j, k]`` where ``a`` and ``b`` are per-bucket
uint8 counts (0..255). Values use the full uint8 range, so the MMA must see
them as unsigned; the kernel is therefore lowered with Lane semantics, where
the Mosaic GPU MMA emits ``u8`` operand types.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class CountsConfig:
  block_m: int = 128
  block_n: int = 64
  block_k: int = 128
  lowering_semantics: plgpu.LoweringSemantics = plgpu.LoweringSemantics.Lane

  def compiler_params(self) -> plgpu.CompilerParams:
    return plgpu.CompilerParams(lowering_semantics=self.lowering_semantics)


@functools.cache
def _counts_kernel(m: int, n: int, k: int, cfg: CountsConfig):
  code_dtype = jnp.uint8
  acc_dtype = jnp.int32
  lhs_layout = plgpu.Layout.MMA_LHS(code_dtype)
  rhs_layout = plgpu.Layout.MMA_RHS(code_dtype)
  acc_layout = plgpu.Layout.MMA_ACC(code_dtype)

  def kernel(a_ref, b_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * cfg.block_m, cfg.block_m)
    ns = pl.ds(lax.axis_index("n") * cfg.block_n, cfg.block_n)
    acc = plgpu.layout_cast(
        jnp.zeros((cfg.block_m, cfg.block_n), acc_dtype), acc_layout)
    for kk in range(k // cfg.block_k):
      ks = pl.ds(kk * cfg.block_k, cfg.block_k)
      a = plgpu.load(a_ref.at[ms, ks], layout=lhs_layout, optimized=False)
      b = plgpu.load(b_ref.at[ns, ks].T, layout=rhs_layout, optimized=False)
      acc = plgpu.mma(acc, a, b)
    o_ref[ms, ns] = acc

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      grid=(m // cfg.block_m, n // cfg.block_n),
      grid_names=("m", "n"),
      compiler_params=cfg.compiler_params(),
  )


@functools.partial(jax.jit, static_argnames=("config",))
def cooccurrence(a: jax.Array, b: jax.Array, *,
                 config: CountsConfig = CountsConfig()) -> jax.Array:
  if a.dtype != jnp.uint8 or b.dtype != jnp.uint8:
    raise TypeError("uint8 count matrices expected")
  (m, k), (n, _) = a.shape, b.shape
  max_total = jnp.iinfo(jnp.uint8).max ** 2 * k
  if max_total > jnp.iinfo(jnp.int32).max:
    raise ValueError(f"K={k} could overflow int32 counts")
  return _counts_kernel(m, n, k, config)(a, b)


if __name__ == "__main__":
  a = jnp.full((256, 1024), 255, jnp.uint8)
  b = jnp.ones((128, 1024), jnp.uint8)
  print(cooccurrence(a, b)[0, 0])  # 261120
  narrow = dataclasses.replace(CountsConfig(), block_n=32, block_k=64)
  print(cooccurrence(a, b, config=narrow).shape)
