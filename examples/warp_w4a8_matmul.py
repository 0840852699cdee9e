"""W4A8 quantized linear layer on the warp-level Mosaic GPU MMA.

y = (x_q @ w_q.T) * SCALE, where x_q are int8 activations (M, K) and w_q are
4-bit weights (N, K) in [-8, 7], stored row-major. The tensor cores accumulate
in int32; the epilogue converts to f32 and applies the combined
activation/weight scale before writing y.

Run on an sm_80+ GPU:  python warp_w4a8_matmul.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 128, 256
X_DTYPE = jnp.int8
W_DTYPE = jnp.int4  # 4-bit weights: half the bytes of int8
SCALE = 1.0 / 512


def kernel(ctx, x, w, y, smem):
  del ctx, smem
  x_layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(X_DTYPE), m_warps=4)
  w_layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(W_DTYPE), m_warps=4)
  x_fa = mgpu.FragmentedArray.load_untiled(
      x, layout=x_layouts.lhs, is_signed=True, optimized=False
  )
  w_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w, (1, 0)),
      layout=w_layouts.rhs,
      is_signed=True,
      optimized=False,
  )
  i32 = ir.IntegerType.get_signless(32)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, i32), (M, N), layout=x_layouts.acc, is_signed=True
  )
  acc = mgpu.mma(acc, x_fa, w_fa)
  y_fa = acc.astype(ir.F32Type.get()) * SCALE
  y_fa.store_untiled(y, optimized=False)


def build_w4a8_linear():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (128, 1, 1),
        (
            jax.ShapeDtypeStruct((M, K), X_DTYPE),
            jax.ShapeDtypeStruct((N, K), W_DTYPE),
        ),
        jax.ShapeDtypeStruct((M, N), jnp.float32),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  x_q = rng.integers(-128, 128, (M, K)).astype(X_DTYPE)
  w_q = rng.integers(-8, 8, (N, K)).astype(W_DTYPE)
  linear = build_w4a8_linear()
  y = np.asarray(linear(x_q, w_q))
  ref = (x_q.astype(np.int32) @ w_q.astype(np.int32).T) * SCALE
  np.testing.assert_allclose(y, ref, rtol=1e-6)
  print("w4a8 linear: OK")


if __name__ == "__main__":
  main()
