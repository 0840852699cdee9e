"""matlib's public op. The operands' dtype is the caller's: the kernel takes it from the refs."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from matlib.kernels.common import K, M, N, mma_tile

__all__ = ["K", "M", "N", "matmul"]


def matmul(a, b, *, acc_dtype=jnp.float32):
  """`a @ b.T` for one (M, K) x (N, K) tile, accumulated (and returned) in `acc_dtype`."""

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), acc_dtype),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )
  def kernel(a_ref, b_ref, o_ref):
    o_ref[...] = mma_tile(a_ref, b_ref, acc_dtype)

  return kernel(a, b)
