"""Dtype-generic warp-level GEMM on Mosaic GPU (``mma.sync``).

Supports 16-bit floats, fp8 (E4M3 / E5M2, sm_89+) and 8-bit integers (signed
or unsigned). The result is ``c + a @ b.T`` in the natural accumulator type:
float32 for floating operands and int32 for integer operands.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils
import jax.numpy as jnp
import numpy as np

_SUPPORTED = tuple(map(jnp.dtype, (
    jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn, jnp.float8_e5m2,
    jnp.int8, jnp.uint8)))


@dataclasses.dataclass(frozen=True)
class WarpGemmConfig:
  block_k: int = 128
  m_warps: int = 2  # 2 x 2 warp grid: better for square-ish tiles


def acc_dtype_for(dtype) -> jnp.dtype:
  return jnp.dtype(jnp.int32 if jnp.issubdtype(dtype, jnp.integer)
                   else jnp.float32)


@functools.cache
def _kernel(m: int, n: int, k: int, dtype: jnp.dtype, cfg: WarpGemmConfig):
  acc_dtype = acc_dtype_for(dtype)
  operand_signed = mgpu_utils.is_signed(dtype)
  acc_signed = mgpu_utils.is_signed(acc_dtype)

  def body(ctx, c_ref, a_ref, b_ref, out_ref, _):
    del ctx
    layouts = mgpu.MMALayouts(mgpu_utils.dtype_to_ir_type(dtype),
                              m_warps=cfg.m_warps)
    acc = mgpu.FragmentedArray.load_untiled(
        c_ref, layout=layouts.acc, is_signed=acc_signed, optimized=False)
    for k0 in range(0, k, cfg.block_k):
      ks = (slice(None), mgpu_utils.ds(k0, cfg.block_k))
      a = mgpu.FragmentedArray.load_untiled(
          mgpu_utils.memref_slice(a_ref, ks), layout=layouts.lhs,
          is_signed=operand_signed, optimized=False)
      b_kn = mgpu_utils.memref_transpose(mgpu_utils.memref_slice(b_ref, ks),
                                         (1, 0))
      b = mgpu.FragmentedArray.load_untiled(
          b_kn, layout=layouts.rhs, is_signed=operand_signed, optimized=False)
      acc = mgpu.mma(acc, a, b)
    acc.store_untiled(out_ref, optimized=False)

  return mgpu.as_gpu_kernel(
      body, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((m, n), acc_dtype),
       jax.ShapeDtypeStruct((m, k), dtype),
       jax.ShapeDtypeStruct((n, k), dtype)),
      jax.ShapeDtypeStruct((m, n), acc_dtype),
      (),
  )


@functools.partial(jax.jit, static_argnames=("config",))
def warp_gemm(a, b, c=None, *, config: WarpGemmConfig = WarpGemmConfig()):
  if a.dtype != b.dtype or a.dtype not in _SUPPORTED:
    raise TypeError(f"unsupported operands {a.dtype}, {b.dtype}")
  acc_dtype = acc_dtype_for(a.dtype)
  (m, k), (n, _) = a.shape, b.shape
  if c is None:
    c = jnp.zeros((m, n), acc_dtype)
  return _kernel(m, n, k, a.dtype, config)(c.astype(acc_dtype), a, b)


if __name__ == "__main__":
  m, n, k = 128, 128, 256
  for dt in (jnp.bfloat16, jnp.float8_e4m3fn, jnp.int8, jnp.uint8):
    a = jnp.ones((m, k), dt)
    b = jnp.ones((n, k), dt)
    out = warp_gemm(a, b)
    np.testing.assert_array_equal(np.asarray(out, np.float64), k)
  print(warp_gemm(jnp.ones((m, k), jnp.int8), jnp.ones((n, k), jnp.int8),
                  jnp.full((m, n), -7, jnp.int32),
                  config=WarpGemmConfig(m_warps=4))[0, 0])
