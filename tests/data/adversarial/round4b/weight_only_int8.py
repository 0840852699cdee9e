"""Weight-only int8 linear layer (W8A16) for serving.

Weights are stored as int8 with a float32 scale per output channel and are
dequantized to the activation dtype inside the kernel, right before the MMA,
so they never have to be materialized in HBM at 16 bits. The per-channel
scale commutes with the K contraction and is applied in the epilogue.
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
class W8A16Config:
  block_m: int = 128
  block_n: int = 64
  block_k: int = 64
  # cp.async-style GMEM loads are only wired up for Lane semantics for now.
  lowering_semantics: plgpu.LoweringSemantics = plgpu.LoweringSemantics.Lane


PREFILL_CONFIG = W8A16Config()
# Decode steps see only a handful of tokens; don't waste 7/8 of the tile.
DECODE_CONFIG = dataclasses.replace(PREFILL_CONFIG, block_m=16, block_n=128)


def pick_config(num_tokens: int) -> W8A16Config:
  return DECODE_CONFIG if num_tokens <= DECODE_CONFIG.block_m else PREFILL_CONFIG


@functools.cache
def _w8a16_kernel(m, n, k, x_dtype, w_dtype, cfg: W8A16Config):
  bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      grid=(m // bm, n // bn),
      grid_names=("m", "n"),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=cfg.lowering_semantics),
  )
  def kernel(x_ref, w_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * bm, bm)
    ns = pl.ds(lax.axis_index("n") * bn, bn)

    def step(ki, acc):
      ks = pl.ds(ki * bk, bk)
      x = plgpu.load(x_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(x_dtype),
                     optimized=False)
      w_q = plgpu.load(w_ref.at[ns, ks].T,
                       layout=plgpu.Layout.MMA_RHS(w_dtype), optimized=False)
      return plgpu.mma(acc, x, w_q.astype(x_dtype))

    acc = plgpu.layout_cast(jnp.zeros((bm, bn), jnp.float32),
                            plgpu.Layout.MMA_ACC(x_dtype))
    o_ref[ms, ns] = lax.fori_loop(0, k // bk, step, acc)

  return kernel


@functools.partial(jax.jit, static_argnames=("config",))
def w8a16_linear(x: jax.Array, w_q: jax.Array, w_scale: jax.Array, *,
                 config: W8A16Config | None = None) -> jax.Array:
  """``x @ (w_q * w_scale[:, None]).T`` with x: (M, K) bf16/f16, w_q: (N, K)."""
  if not jnp.issubdtype(w_q.dtype, jnp.signedinteger) or w_q.dtype.itemsize != 1:
    raise TypeError(f"int8 weights expected, got {w_q.dtype}")
  if x.dtype not in (jnp.bfloat16, jnp.float16):
    return (x.astype(jnp.float32) @ (w_q.astype(jnp.float32) * w_scale[:, None]).T
            ).astype(x.dtype)
  m, k = x.shape
  n = w_q.shape[0]
  cfg = config or pick_config(m)
  m_pad = pl.cdiv(m, cfg.block_m) * cfg.block_m
  x_p = jnp.pad(x, ((0, m_pad - m), (0, 0)))
  kernel = _w8a16_kernel(m_pad, n, k, x.dtype, w_q.dtype, cfg)
  y = kernel(x_p, w_q)[:m] * w_scale[None, :]
  return y.astype(x.dtype)


if __name__ == "__main__":
  w_q = jnp.ones((1024, 2048), jnp.int8)
  w_s = jnp.full((1024,), 0.02, jnp.float32)
  prefill = jnp.ones((256, 2048), jnp.bfloat16)
  decode = jnp.ones((4, 2048), jnp.bfloat16)
  print(w8a16_linear(prefill, w_q, w_s).shape)
  print(w8a16_linear(decode, w_q, w_s).shape)
