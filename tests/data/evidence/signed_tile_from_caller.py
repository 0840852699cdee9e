"""A raw Mosaic GPU helper for the caller's signed integer tiles: `is_signed=True` says integer,
the layouts' width comes from the caller too. Whatever the width, a float32 accumulator fails
(int8 and int4 need int32; int2, int16, int32 and int64 are no operand type): MMA101."""

from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def signed_tile(a_ref, b_ref, element_type):
  layouts = mgpu.MMALayouts(element_type)
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (64, 64), layout=layouts.acc)
  return mgpu.mma(acc, a, b)
