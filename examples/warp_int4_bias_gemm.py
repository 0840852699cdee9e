"""W4A4 GEMM with an integer bias on the warp-level Mosaic GPU MMA.

out (M, N) int32 = x (M, K) @ w (N, K).T + bias, with 4-bit signed x and w
(`mma.sync.m16n8k64.s32.s4.s4.s32`). The bias comes from the float checkpoint
as float32 holding whole numbers (already divided by the quantization scales);
the kernel loads it in the accumulator layout and converts it to int32 in
registers, so the bias add costs nothing.

Run on an sm_80+ GPU:  python warp_int4_bias_gemm.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 128, 256
DTYPE = jnp.int4


def kernel(ctx, x, w, bias, out, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE), m_warps=2)
  x_fa = mgpu.FragmentedArray.load_untiled(
      x, layout=layouts.lhs, is_signed=True, optimized=False)
  w_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w, (1, 0)), layout=layouts.rhs, is_signed=True,
      optimized=False)
  bias_f32 = mgpu.FragmentedArray.load_untiled(
      bias, layout=layouts.acc, optimized=False)
  acc = bias_f32.astype(ir.IntegerType.get_signless(32))
  mgpu.mma(acc, x_fa, w_fa).store_untiled(out, optimized=False)


def build_gemm():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (128, 1, 1),
        (
            jax.ShapeDtypeStruct((M, K), DTYPE),
            jax.ShapeDtypeStruct((N, K), DTYPE),
            jax.ShapeDtypeStruct((M, N), jnp.float32),
        ),
        jax.ShapeDtypeStruct((M, N), jnp.int32),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  x = rng.integers(-8, 8, (M, K)).astype(DTYPE)
  w = rng.integers(-8, 8, (N, K)).astype(DTYPE)
  bias = np.round(rng.normal(0, 100, (M, N))).astype(np.float32)
  out = np.asarray(build_gemm()(x, w, bias))
  ref = x.astype(np.int32) @ w.astype(np.int32).T + bias.astype(np.int32)
  np.testing.assert_array_equal(out, ref)
  print("w4a4 gemm + bias: OK")


if __name__ == "__main__":
  main()
