"""Warp-level int8 GEMM with Mosaic GPU: out = x @ w.T in int32.

x is an (M, K) int8 activation tile and w an (N, K) int8 weight tile stored
row-major, so the kernel reads w through a transposed memref view as the
(K, N) B operand. One 128-thread block (4 warps, m_warps=4) computes the whole
128x128 output with `mma.sync.m16n8k32.s32.s8.s8.s32`.

Run on an sm_80+ GPU:  python warp_int8_matmul.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 128, 128
IN_DTYPE = jnp.int8
OUT_DTYPE = jnp.int32


def zero_accumulator(shape, layout):
  """A zero-filled accumulator fragment in the given register layout."""
  zero = utils.c(0.0, ir.F32Type.get())
  return mgpu.FragmentedArray.splat(zero, shape, layout=layout)


def kernel(ctx, x, w, out, smem):
  del ctx, smem  # No TMA and no shared memory: operands are read from GMEM.
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(IN_DTYPE), m_warps=4)
  is_signed = utils.is_signed(IN_DTYPE)
  x_fa = mgpu.FragmentedArray.load_untiled(
      x, layout=layouts.lhs, is_signed=is_signed, optimized=False
  )
  w_t = utils.memref_transpose(w, (1, 0))  # (N, K) -> (K, N) view
  w_fa = mgpu.FragmentedArray.load_untiled(
      w_t, layout=layouts.rhs, is_signed=is_signed, optimized=False
  )
  acc = zero_accumulator((M, N), layouts.acc)
  acc = mgpu.mma(acc, x_fa, w_fa)
  acc.store_untiled(out, optimized=False)


def build_int8_matmul():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (128, 1, 1),
        (
            jax.ShapeDtypeStruct((M, K), IN_DTYPE),
            jax.ShapeDtypeStruct((N, K), IN_DTYPE),
        ),
        jax.ShapeDtypeStruct((M, N), OUT_DTYPE),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  x = rng.integers(-128, 128, (M, K)).astype(IN_DTYPE)
  w = rng.integers(-128, 128, (N, K)).astype(IN_DTYPE)
  matmul = build_int8_matmul()
  out = np.asarray(matmul(x, w))
  expected = x.astype(np.int32) @ w.astype(np.int32).T
  np.testing.assert_array_equal(out, expected)
  print("int8 matmul: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
