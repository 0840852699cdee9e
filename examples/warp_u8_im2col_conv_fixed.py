"""3x3 convolution of a uint8 image with int8 filters, as an im2col GEMM.

The host unfolds the (H, W, C) uint8 image into (H*W, 9*C) patches (zero
padding); the kernel multiplies them with the (F, 9*C) int8 filter bank on the
warp-level Mosaic GPU MMA. mma.sync multiplies unsigned by signed 8-bit
operands directly (`.u8.s8`), so pixels need no re-centring.

Run on an sm_80+ GPU:  python warp_u8_im2col_conv.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

H, W, C, F = 16, 8, 32, 64
P, KK = H * W, 9 * C  # GEMM M and K
PIXEL_DTYPE = jnp.uint8
FILTER_DTYPE = jnp.int8


def conv_gemm(ctx, patches, filters, out, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(FILTER_DTYPE), m_warps=4)
  filt = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(filters, (1, 0)), layout=layouts.rhs,
      is_signed=True, optimized=False)
  pix = mgpu.FragmentedArray.load_untiled(
      patches, layout=layouts.lhs, is_signed=False, optimized=False)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, ir.IntegerType.get_signless(32)), (P, F),
      layout=layouts.acc, is_signed=True)
  mgpu.mma(acc, pix, filt).store_untiled(out, optimized=False)


def im2col(image):
  padded = np.pad(image, ((1, 1), (1, 1), (0, 0)))
  cols = [padded[dy:dy + H, dx:dx + W] for dy in range(3) for dx in range(3)]
  return np.concatenate(cols, axis=-1).reshape(P, KK)


def main():
  rng = np.random.default_rng(0)
  image = rng.integers(0, 256, (H, W, C)).astype(PIXEL_DTYPE)
  filters = rng.integers(-128, 128, (F, KK)).astype(FILTER_DTYPE)
  patches = im2col(image)
  with mlir.make_ir_context(), ir.Location.unknown():
    conv = mgpu.as_gpu_kernel(
        conv_gemm, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((P, KK), PIXEL_DTYPE),
         jax.ShapeDtypeStruct((F, KK), FILTER_DTYPE)),
        jax.ShapeDtypeStruct((P, F), jnp.int32), (),
    )
  out = np.asarray(conv(patches, filters)).reshape(H, W, F)
  ref = (patches.astype(np.int32) @ filters.astype(np.int32).T).reshape(H, W, F)
  np.testing.assert_array_equal(out, ref)
  print("uint8 conv: OK, output range", out.min(), out.max())


if __name__ == "__main__":
  main()
