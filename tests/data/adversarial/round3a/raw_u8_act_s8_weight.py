"""Quantized linear layer: uint8 activations (post-ReLU, zero point 0) times
int8 weights, int32 accumulation. mma.sync supports mixing u8 and s8
operands, so no widening is needed.

x: (M, K) uint8, w: (N, K) int8, out: (M, N) int32 = x @ w.T
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 64, 256
BLOCK_K = 64
X_DTYPE = jnp.uint8
W_DTYPE = jnp.int8


def _load_int_operand(ref, layout):
  # Integer MMA operands must carry a signedness; int32 accumulation is
  # signed anyway.
  return mgpu.FragmentedArray.load_untiled(
      ref, layout=layout, is_signed=True, optimized=False
  )


def kernel(ctx, x, w, out, _):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(X_DTYPE))
  i32 = ir.IntegerType.get_signless(32)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(i32, 0), (M, N), layout=layouts.acc, is_signed=True
  )
  for kk in range(K // BLOCK_K):
    k_win = utils.ds(kk * BLOCK_K, BLOCK_K)
    x_k = _load_int_operand(utils.memref_slice(x, (slice(None), k_win)), layouts.lhs)
    w_k = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(utils.memref_slice(w, (slice(None), k_win)), (1, 0)),
        layout=layouts.rhs,
        is_signed=utils.is_signed(W_DTYPE),
        optimized=False,
    )
    acc = mgpu.mma(acc, x_k, w_k)
  acc.store_untiled(out, optimized=False)


def build():
  return mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), X_DTYPE), jax.ShapeDtypeStruct((N, K), W_DTYPE)),
      jax.ShapeDtypeStruct((M, N), jnp.int32),
      (),
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  x = rng.integers(0, 256, (M, K)).astype(X_DTYPE)
  w = rng.integers(-128, 128, (N, K)).astype(W_DTYPE)
  np.testing.assert_array_equal(
      build()(x, w), x.astype(np.int32) @ w.astype(np.int32).T
  )
