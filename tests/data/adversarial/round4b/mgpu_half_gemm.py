"""Single-CTA half-precision GEMM written directly against Mosaic GPU.

Used for small projection matrices where a full pipelined Pallas kernel is
overkill: one CTA (one warpgroup) walks the K dimension in slabs of
``block_k`` and keeps the (M, N) tile in registers.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils
import jax.numpy as jnp
from jaxlib.mlir import ir

_HALF_DTYPES = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


@dataclasses.dataclass(frozen=True)
class HalfGemmConfig:
  block_k: int = 64
  m_warps: int = 4


def _load_slab(a_ref, b_ref, layouts, k_start: int, block_k: int):
  ks = mgpu_utils.ds(k_start, block_k)
  a_slab = mgpu_utils.memref_slice(a_ref, (slice(None), ks))
  b_slab = mgpu_utils.memref_slice(b_ref, (slice(None), ks))
  a = mgpu.FragmentedArray.load_untiled(
      a_slab, layout=layouts.lhs, optimized=False
  )
  # B is stored (N, K); view it as (K, N) so K stays the contiguous axis.
  b = mgpu.FragmentedArray.load_untiled(
      mgpu_utils.memref_transpose(b_slab, (1, 0)), layout=layouts.rhs,
      optimized=False,
  )
  return a, b


def _accumulate(a, b, acc):
  """acc += a @ b for one K slab."""
  return mgpu.mma(a, b, acc)


@functools.cache
def _half_gemm(m: int, n: int, k: int, dtype, config: HalfGemmConfig):
  num_slabs = k // config.block_k

  def body(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(
        mgpu_utils.dtype_to_ir_type(dtype), m_warps=config.m_warps
    )
    f32 = ir.F32Type.get()
    acc = mgpu.FragmentedArray.splat(
        mgpu.c(0.0, f32), (m, n), layout=layouts.acc
    )
    for s in range(num_slabs):
      a, b = _load_slab(a_ref, b_ref, layouts, s * config.block_k,
                        config.block_k)
      acc = _accumulate(a, b, acc)
    acc.store_untiled(out_ref, optimized=False)

  return mgpu.as_gpu_kernel(
      body,
      grid=(1, 1, 1),
      block=(128, 1, 1),
      in_shape=(jax.ShapeDtypeStruct((m, k), dtype),
                jax.ShapeDtypeStruct((n, k), dtype)),
      out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
      smem_scratch_shape=(),
  )


@functools.partial(jax.jit, static_argnames=("config",))
def half_gemm(a: jax.Array, b: jax.Array, *,
              config: HalfGemmConfig = HalfGemmConfig()) -> jax.Array:
  """Returns a @ b.T in float32 for bf16/f16 a: (M, K), b: (N, K)."""
  if a.dtype not in _HALF_DTYPES or b.dtype != a.dtype:
    return jnp.dot(a, b.T, preferred_element_type=jnp.float32)
  (m, k), (n, _) = a.shape, b.shape
  if k % config.block_k:
    raise ValueError(f"K={k} not a multiple of block_k={config.block_k}")
  return _half_gemm(m, n, k, a.dtype, config)(a, b)


if __name__ == "__main__":
  a = jnp.ones((128, 256), jnp.bfloat16)
  b = jnp.ones((128, 256), jnp.bfloat16)
  print(half_gemm(a, b).sum())
  print(half_gemm(a.astype(jnp.float16), b.astype(jnp.float16)).sum())
