"""One warp-MMA GEMM kernel builder for int8 and bf16, checked in a sweep.

out (M, N) = a (M, K) @ b (N, K).T, accumulated in int32 for int8 operands and
in f32 for bf16 operands. The operand loads are factored into a helper shared
by both dtypes.

Run on an sm_80+ GPU:  python warp_mixed_sweep_is_signed.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 128, 128


def load_operands(a, b, layouts):
  """Loads A (M, K) and B (N, K), the latter transposed, into MMA registers."""
  a_fa = mgpu.FragmentedArray.load_untiled(
      a, layout=layouts.lhs, is_signed=True, optimized=False)
  b_fa = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b, (1, 0)), layout=layouts.rhs, is_signed=True,
      optimized=False)
  return a_fa, b_fa


def build_gemm(dtype):
  is_integer = jnp.issubdtype(dtype, jnp.integer)
  acc_dtype = jnp.int32 if is_integer else jnp.float32

  def kernel(ctx, a, b, out, smem):
    del ctx, smem
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=4)
    a_fa, b_fa = load_operands(a, b, layouts)
    zero = arith.constant(utils.dtype_to_ir_type(acc_dtype),
                          0 if is_integer else 0.0)
    acc = mgpu.FragmentedArray.splat(
        zero, (M, N), layout=layouts.acc, is_signed=utils.is_signed(acc_dtype))
    mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)

  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), dtype),
         jax.ShapeDtypeStruct((N, K), dtype)),
        jax.ShapeDtypeStruct((M, N), acc_dtype),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  for dtype in (jnp.int8, jnp.bfloat16):
    a = rng.integers(-8, 8, (M, K)).astype(dtype)
    b = rng.integers(-8, 8, (N, K)).astype(dtype)
    out = np.asarray(build_gemm(dtype)(a, b))
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_array_equal(out.astype(np.float64), ref)
    print(f"{jnp.dtype(dtype).name}: OK")


if __name__ == "__main__":
  main()
