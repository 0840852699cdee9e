"""Raw Mosaic GPU: the operand dtype comes from a flag, the accumulator is int16 (no operand dtype takes it)."""

import os

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir

DTYPE = jnp.dtype(os.environ.get("MATMUL_DTYPE", "int8"))


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  signed = utils.is_signed(DTYPE)
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=signed, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=signed, optimized=False)
  i16 = ir.IntegerType.get_signless(16)
  acc = mgpu.FragmentedArray.splat(utils.c(0, i16), (128, 128), layout=layouts.acc, is_signed=True)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((128, 128), DTYPE), jax.ShapeDtypeStruct((128, 128), DTYPE)),
    jax.ShapeDtypeStruct((128, 128), jnp.int16), ())
