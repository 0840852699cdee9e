"""Split-K int8 GEMM with an int32 carry, for integer-only inference.

Long contractions are split into shards that are processed by separate
launches (so each launch fits the register budget); every launch adds its
partial product onto the int32 partial sums of the previous shard:

    partial_{s+1} = partial_s + A[:, K_s] @ B[:, K_s].T

The final int32 sums are requantized by the caller.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils
import jax.numpy as jnp
import numpy as np

_CODE_DTYPE = jnp.dtype(jnp.int8)


@dataclasses.dataclass(frozen=True)
class SplitKConfig:
  shard_k: int = 256
  slab_k: int = 64


def _load_codes(ref, layout):
  # Codes are raw bytes here; the symmetric quantizer guarantees the
  # product is formed on the stored bit patterns.
  return mgpu.FragmentedArray.load_untiled(
      ref, layout=layout, is_signed=False, optimized=False
  )


@functools.cache
def _shard_kernel(m: int, n: int, shard_k: int, slab_k: int):
  def body(ctx, partial_ref, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(mgpu_utils.dtype_to_ir_type(_CODE_DTYPE))
    acc = mgpu.FragmentedArray.load_untiled(
        partial_ref, layout=layouts.acc, optimized=False
    )
    for k0 in range(0, shard_k, slab_k):
      ks = mgpu_utils.ds(k0, slab_k)
      a = _load_codes(mgpu_utils.memref_slice(a_ref, (slice(None), ks)),
                      layouts.lhs)
      b = _load_codes(
          mgpu_utils.memref_transpose(
              mgpu_utils.memref_slice(b_ref, (slice(None), ks)), (1, 0)),
          layouts.rhs,
      )
      acc = mgpu.mma(acc, a, b)
    acc.store_untiled(out_ref, optimized=False)

  i32 = jnp.int32
  return mgpu.as_gpu_kernel(
      body, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((m, n), i32),
       jax.ShapeDtypeStruct((m, shard_k), _CODE_DTYPE),
       jax.ShapeDtypeStruct((n, shard_k), _CODE_DTYPE)),
      jax.ShapeDtypeStruct((m, n), i32),
      (),
  )


@functools.partial(jax.jit, static_argnames=("config",))
def splitk_int8_matmul(a_q: jax.Array, b_q: jax.Array, *,
                       config: SplitKConfig = SplitKConfig()) -> jax.Array:
  """Exact int32 ``a_q @ b_q.T`` for int8 a_q: (M, K), b_q: (N, K)."""
  (m, k), (n, _) = a_q.shape, b_q.shape
  if a_q.dtype != _CODE_DTYPE or b_q.dtype != _CODE_DTYPE:
    raise TypeError("int8 operands expected")
  if k % config.shard_k or config.shard_k % config.slab_k:
    raise ValueError("K must split evenly into shards and slabs")
  kernel = _shard_kernel(m, n, config.shard_k, config.slab_k)
  partial = jnp.zeros((m, n), jnp.int32)
  for s in range(k // config.shard_k):
    ks = slice(s * config.shard_k, (s + 1) * config.shard_k)
    partial = kernel(partial, a_q[:, ks], b_q[:, ks])
  return partial


def quantize_symmetric(x, axis=-1):
  qmax = jnp.iinfo(jnp.int8).max
  scale = jnp.max(jnp.abs(x), axis=axis, keepdims=True) / qmax
  return jnp.round(x / scale).astype(jnp.int8), scale


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.standard_normal((128, 1024)), jnp.float32)
  w = jnp.asarray(rng.standard_normal((64, 1024)), jnp.float32)
  xq, xs = quantize_symmetric(x)
  wq, ws = quantize_symmetric(w)
  y = splitk_int8_matmul(xq, wq).astype(jnp.float32) * xs * ws.T
  print(float(jnp.abs(y - x @ w.T).max()))
