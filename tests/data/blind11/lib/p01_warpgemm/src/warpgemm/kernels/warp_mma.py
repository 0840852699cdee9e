"""Kernel bodies for a single 128x128 tile computed with warp-level MMA."""

from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def make_tile_body(operand_dtype, acc_dtype):
  """Returns an ``as_gpu_kernel`` body computing ``out = acc + a @ b.T``."""
  ab_is_signed = utils.is_signed(operand_dtype)
  acc_is_signed = utils.is_signed(acc_dtype)

  def body(ctx, acc, a, b, out, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(operand_dtype))
    a_fa = mgpu.FragmentedArray.load_untiled(
        a, layout=layouts.lhs, is_signed=ab_is_signed, optimized=False
    )
    b_t = utils.memref_transpose(b, (1, 0))
    b_fa = mgpu.FragmentedArray.load_untiled(
        b_t, layout=layouts.rhs, is_signed=ab_is_signed, optimized=False
    )
    acc_fa = mgpu.FragmentedArray.load_untiled(
        acc, layout=layouts.acc, is_signed=acc_is_signed, optimized=False
    )
    result = mgpu.mma(acc_fa, a_fa, b_fa)
    result.store_untiled(out, optimized=False)

  return body
