"""GEMM with a C input on the warp-level Mosaic GPU MMA: out = x @ w.T + c.

x (M, K) and w (N, K) come straight from a float32 model; c (M, N) is the
residual stream, loaded directly into the MMA accumulator layout so the add
is free. One 128-thread block computes the 128x128 tile.

Run on an sm_80+ GPU:  python warp_f32_linear.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 128, 128
# Operand dtype of the tensor-core multiply: mma.sync takes 16-bit floats,
# so the f32 inputs are rounded to bf16 (the accumulator stays f32).
OPERAND_DTYPE = jnp.bfloat16


def kernel(ctx, x, w, c, out, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(OPERAND_DTYPE), m_warps=4)
  x_fa = mgpu.FragmentedArray.load_untiled(x, layout=layouts.lhs,
                                           optimized=False)
  w_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w, (1, 0)), layout=layouts.rhs, optimized=False
  )
  c_fa = mgpu.FragmentedArray.load_untiled(c, layout=layouts.acc,
                                           optimized=False)
  mgpu.mma(c_fa, x_fa, w_fa).store_untiled(out, optimized=False)


def build_linear():
  in_shapes = (
      jax.ShapeDtypeStruct((M, K), OPERAND_DTYPE),
      jax.ShapeDtypeStruct((N, K), OPERAND_DTYPE),
      jax.ShapeDtypeStruct((M, N), jnp.float32),
  )
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), in_shapes, out_shape, ()
    )


def main():
  rng = np.random.default_rng(0)
  x = rng.uniform(-1, 1, (M, K)).astype(np.float32)
  w = rng.uniform(-1, 1, (N, K)).astype(np.float32)
  c = rng.uniform(-1, 1, (M, N)).astype(np.float32)
  x_in = x.astype(OPERAND_DTYPE)
  w_in = w.astype(OPERAND_DTYPE)
  out = np.asarray(build_linear()(x_in, w_in, c))
  # Reference from the operands the tensor cores actually see.
  ref = np.asarray(x_in, np.float32) @ np.asarray(w_in, np.float32).T + c
  np.testing.assert_allclose(out, ref, atol=1e-4, rtol=1e-4)
  print("linear: OK")


if __name__ == "__main__":
  main()
