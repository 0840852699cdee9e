"""int8 GEMM over a long K on the warp-level Mosaic GPU MMA.

out (M, N) int32 = a (M, K) @ b (N, K).T with K = 4 * TILE_K. The kernel walks
K in TILE_K steps, loading one (M, TILE_K) slice of a and one (N, TILE_K)
slice of b per step into MMA registers and accumulating into a single int32
accumulator fragment.

Run on an sm_80+ GPU:  python warp_kloop_arg_order.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, TILE_K = 128, 128, 128
K = 4 * TILE_K
DTYPE = jnp.int8


def kernel(ctx, a, b, out, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE), m_warps=4)
  i32 = ir.IntegerType.get_signless(32)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, i32), (M, N), layout=layouts.acc, is_signed=True
  )
  for k0 in range(0, K, TILE_K):
    k_slice = slice(k0, k0 + TILE_K)
    a_tile = mgpu.FragmentedArray.load_untiled(
        utils.memref_slice(a, (slice(None), k_slice)),
        layout=layouts.lhs, is_signed=True, optimized=False,
    )
    b_tile = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(utils.memref_slice(b, (slice(None), k_slice)),
                               (1, 0)),
        layout=layouts.rhs, is_signed=True, optimized=False,
    )
    acc = mgpu.mma(acc, a_tile, b_tile)
  acc.store_untiled(out, optimized=False)


def main():
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (M, K)).astype(DTYPE)
  b = rng.integers(-128, 128, (N, K)).astype(DTYPE)
  with mlir.make_ir_context(), ir.Location.unknown():
    gemm = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((M, N), jnp.int32), (),
    )
  out = np.asarray(gemm(a, b))
  np.testing.assert_array_equal(
      out, a.astype(np.int32) @ b.astype(np.int32).T
  )
  print("int8 K-loop gemm: OK")


if __name__ == "__main__":
  main()
