"""FP8 linear layer (forward + input gradient) on the warp-level MMA path.

Following the usual FP8 training recipe, activations and weights are cast to
E4M3 (more mantissa) while incoming gradients are cast to E5M2 (more range).
Tensors are scaled per tensor so that their absolute maximum maps onto the
largest finite value of the target format.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

FWD_DTYPE = jnp.dtype(jnp.float8_e4m3fn)
BWD_DTYPE = jnp.dtype(jnp.float8_e5m2)


@dataclasses.dataclass(frozen=True)
class Fp8Config:
  block_m: int = 128
  block_n: int = 64
  block_k: int = 128


def _scale_to(x: jax.Array, dtype) -> tuple[jax.Array, jax.Array]:
  fmax = jnp.finfo(dtype).max.astype(jnp.float32)
  amax = jnp.max(jnp.abs(x)).astype(jnp.float32)
  scale = jnp.where(amax > 0, amax / fmax, 1.0)
  return (x.astype(jnp.float32) / scale).astype(dtype), scale


@functools.cache
def _fp8_gemm(m: int, n: int, k: int, lhs_dtype, rhs_dtype, cfg: Fp8Config):
  """Returns f(a, b_nk) = a @ b_nk.T in float32; b_nk is stored (N, K)."""
  bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      grid=(m // bm, n // bn),
      grid_names=("m", "n"),
  )
  def kernel(a_ref, b_ref, o_ref):
    ms = pl.ds(lax.axis_index("m") * bm, bm)
    ns = pl.ds(lax.axis_index("n") * bn, bn)

    def step(ki, acc):
      ks = pl.ds(ki * bk, bk)
      a = plgpu.load(a_ref.at[ms, ks], layout=plgpu.Layout.MMA_LHS(lhs_dtype),
                     optimized=False)
      b = plgpu.load(b_ref.at[ns, ks].T,
                     layout=plgpu.Layout.MMA_RHS(rhs_dtype), optimized=False)
      return plgpu.mma(acc, a, b)

    acc = plgpu.layout_cast(jnp.zeros((bm, bn), jnp.float32),
                            plgpu.Layout.MMA_ACC(lhs_dtype))
    o_ref[ms, ns] = lax.fori_loop(0, k // bk, step, acc)

  return kernel


@functools.partial(jax.jit, static_argnames=("cfg",))
def fp8_linear_fwd(x, w, *, cfg: Fp8Config = Fp8Config()):
  """y = x @ w.T with x: (M, K), w: (N, K)."""
  (m, k), (n, _) = x.shape, w.shape
  xq, sx = _scale_to(x, FWD_DTYPE)
  wq, sw = _scale_to(w, FWD_DTYPE)
  y = _fp8_gemm(m, n, k, FWD_DTYPE, FWD_DTYPE, cfg)(xq, wq)
  return (y * (sx * sw)).astype(x.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def fp8_linear_dgrad(dy, w, *, cfg: Fp8Config = Fp8Config()):
  """dx = dy @ w with dy: (M, N), w: (N, K)."""
  (m, n), (_, k) = dy.shape, w.shape
  dyq, sdy = _scale_to(dy, BWD_DTYPE)
  wq, sw = _scale_to(w, FWD_DTYPE)
  # The kernel contracts over the minor axis of its (rows, contraction) rhs,
  # so hand it w transposed: (K, N).
  dx = _fp8_gemm(m, k, n, BWD_DTYPE, FWD_DTYPE, cfg)(dyq, wq.T)
  return (dx * (sdy * sw)).astype(dy.dtype)


@jax.custom_vjp
def fp8_linear(x, w):
  return fp8_linear_fwd(x, w)


def _fp8_linear_vjp_fwd(x, w):
  return fp8_linear_fwd(x, w), (x, w)


def _fp8_linear_vjp_bwd(res, dy):
  x, w = res
  dx = fp8_linear_dgrad(dy, w)
  dw = jnp.dot(dy.T.astype(jnp.float32), x.astype(jnp.float32)).astype(w.dtype)
  return dx, dw


fp8_linear.defvjp(_fp8_linear_vjp_fwd, _fp8_linear_vjp_bwd)


if __name__ == "__main__":
  x = jnp.ones((256, 512), jnp.bfloat16)
  w = jnp.ones((128, 512), jnp.bfloat16)
  loss = lambda x, w: jnp.sum(fp8_linear(x, w).astype(jnp.float32))
  dx, dw = jax.grad(loss, argnums=(0, 1))(x, w)
  print(dx.shape, dw.shape)
