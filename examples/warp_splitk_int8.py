"""Second pass of a split-K int8 GEMM on the warp-level Mosaic GPU MMA.

out (M, N) int32 = partial (M, N) + x[:, K/2:] @ w[:, K/2:].T, where partial
holds the first pass's int32 sums. x is int8 activations and w symmetric
int8 weights (both signed, in [-127, 127]), w stored (N, K) row-major.
The tile is split over the warps along N (m_warps=1), which suits the narrow
M of decode-time batches.

Run on an sm_80+ GPU:  python warp_splitk_int8.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K_HALF = 16, 256, 128
X_DTYPE = jnp.int8
W_DTYPE = jnp.int8


def second_pass(ctx, partial, x, w, out, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(X_DTYPE), m_warps=1)
  acc = mgpu.FragmentedArray.load_untiled(
      partial, layout=layouts.acc, is_signed=True, optimized=False)
  x_fa = mgpu.FragmentedArray.load_untiled(
      x, layout=layouts.lhs, is_signed=True, optimized=False)
  w_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w, (1, 0)), layout=layouts.rhs,
      is_signed=False, optimized=False)
  mgpu.mma(acc, x_fa, w_fa).store_untiled(out, optimized=False)


def build_second_pass():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        second_pass,
        (1, 1, 1),
        (128, 1, 1),
        (
            jax.ShapeDtypeStruct((M, N), jnp.int32),
            jax.ShapeDtypeStruct((M, K_HALF), X_DTYPE),
            jax.ShapeDtypeStruct((N, K_HALF), W_DTYPE),
        ),
        jax.ShapeDtypeStruct((M, N), jnp.int32),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  x = rng.integers(-127, 128, (M, 2 * K_HALF)).astype(X_DTYPE)
  w = rng.integers(-127, 128, (N, 2 * K_HALF)).astype(W_DTYPE)
  x_lo, x_hi = x[:, :K_HALF], x[:, K_HALF:]
  w_lo, w_hi = w[:, :K_HALF], w[:, K_HALF:]
  partial = x_lo.astype(np.int32) @ w_lo.astype(np.int32).T  # first pass
  out = np.asarray(build_second_pass()(
      partial, np.ascontiguousarray(x_hi), np.ascontiguousarray(w_hi)))
  np.testing.assert_array_equal(out, x.astype(np.int32) @ w.astype(np.int32).T)
  print("split-K int8 GEMM: OK")


if __name__ == "__main__":
  main()
