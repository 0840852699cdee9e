"""Exact integer GEMM (int8 / uint8 operands, int32 result) on Mosaic GPU.

Used for retrieval over quantized embeddings: database codes are uint8
(asymmetric, zero point folded into a per-row correction) or int8
(symmetric). The integer dot products must be exact, so the kernel keeps an
int32 accumulator and never touches floating point.
"""

from __future__ import annotations

import functools

import jax
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils
import jax.numpy as jnp
from jaxlib.mlir import ir

_INT_DTYPES = (jnp.dtype(jnp.int8), jnp.dtype(jnp.uint8))
ACC_DTYPE = jnp.dtype(jnp.int32)


@functools.cache
def _int_gemm_kernel(m: int, n: int, k: int, dtype: jnp.dtype, *,
                     block_k: int = 128, m_warps: int = 4):
  if dtype not in _INT_DTYPES:
    raise NotImplementedError(dtype)
  operand_is_signed = mgpu_utils.is_signed(dtype)

  def body(ctx, q_ref, db_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(mgpu_utils.dtype_to_ir_type(dtype),
                              m_warps=m_warps)
    i32 = ir.IntegerType.get_signless(32)
    acc = mgpu.FragmentedArray.splat(
        mgpu.c(0, i32), (m, n), layout=layouts.acc,
        is_signed=operand_is_signed,
    )
    for k0 in range(0, k, block_k):
      ks = mgpu_utils.ds(k0, block_k)
      q = mgpu.FragmentedArray.load_untiled(
          mgpu_utils.memref_slice(q_ref, (slice(None), ks)),
          layout=layouts.lhs, is_signed=operand_is_signed, optimized=False,
      )
      db = mgpu.FragmentedArray.load_untiled(
          mgpu_utils.memref_transpose(
              mgpu_utils.memref_slice(db_ref, (slice(None), ks)), (1, 0)),
          layout=layouts.rhs, is_signed=operand_is_signed, optimized=False,
      )
      acc = mgpu.mma(acc, q, db)
    acc.store_untiled(out_ref, optimized=False)

  return mgpu.as_gpu_kernel(
      body, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((m, k), dtype), jax.ShapeDtypeStruct((n, k), dtype)),
      jax.ShapeDtypeStruct((m, n), ACC_DTYPE),
      (),
  )


@functools.partial(jax.jit, static_argnames=("block_k",))
def int_scores(queries: jax.Array, database: jax.Array, *,
               block_k: int = 128) -> jax.Array:
  """Exact int32 inner products ``queries @ database.T``."""
  if queries.dtype != database.dtype:
    raise TypeError(f"{queries.dtype} != {database.dtype}")
  if not jnp.issubdtype(queries.dtype, jnp.integer):
    raise TypeError("integer codes expected")
  (m, k), (n, _) = queries.shape, database.shape
  return _int_gemm_kernel(m, n, k, queries.dtype, block_k=block_k)(
      queries, database)


def asymmetric_scores(q_codes, db_codes, q_zero, db_zero):
  """Scores for uint8 codes with zero points: sum((q - zq) * (d - zd))."""
  k = q_codes.shape[-1]
  raw = int_scores(q_codes, db_codes)
  q_sum = jnp.sum(q_codes.astype(jnp.int32), axis=-1, keepdims=True)
  d_sum = jnp.sum(db_codes.astype(jnp.int32), axis=-1)[None, :]
  return raw - db_zero * q_sum - q_zero * d_sum + k * q_zero * db_zero


if __name__ == "__main__":
  q = jnp.full((128, 256), 200, jnp.uint8)
  db = jnp.full((64, 256), 131, jnp.uint8)
  print(asymmetric_scores(q, db, 128, 128)[0, 0])
  print(int_scores(q.astype(jnp.int8) // 2, db.astype(jnp.int8) // 2).dtype)
