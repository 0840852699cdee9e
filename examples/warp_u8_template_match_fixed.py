"""Template matching of 8-bit image patches on the warp-level Mosaic GPU MMA.

scores (P, T) int32 = patches (P, D) @ templates (T, D).T, where each row is a
flattened 8x16 patch of pixels. Camera frames arrive as uint8; the signed int8
path is used for mean-subtracted (zero-centred) patches. The same kernel
builder serves both, and main() checks both against NumPy.

Run on an sm_80+ GPU:  python warp_u8_template_match.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

P, T, D = 128, 64, 128  # patches, templates, pixels per patch
ACC_DTYPE = jnp.int32


def build_matcher(dtype):
  """Returns a kernel scoring (P, D) patches against (T, D) templates."""
  is_signed = utils.is_signed(dtype)

  def kernel(ctx, patches, templates, scores, smem):
    del ctx, smem
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=4)
    p_fa = mgpu.FragmentedArray.load_untiled(
        patches, layout=layouts.lhs, is_signed=is_signed, optimized=False)
    t_fa = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(templates, (1, 0)), layout=layouts.rhs,
        is_signed=is_signed, optimized=False)
    zero = arith.constant(utils.dtype_to_ir_type(ACC_DTYPE), 0)
    acc = mgpu.FragmentedArray.splat(
        zero, (P, T), layout=layouts.acc, is_signed=utils.is_signed(ACC_DTYPE))
    mgpu.mma(acc, p_fa, t_fa).store_untiled(scores, optimized=False)

  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((P, D), dtype),
         jax.ShapeDtypeStruct((T, D), dtype)),
        jax.ShapeDtypeStruct((P, T), ACC_DTYPE),
        (),
    )


def main():
  rng = np.random.default_rng(0)
  for dtype in (jnp.int8, jnp.uint8):
    info = jnp.iinfo(dtype)
    patches = rng.integers(info.min, info.max + 1, (P, D)).astype(dtype)
    templates = rng.integers(info.min, info.max + 1, (T, D)).astype(dtype)
    scores = np.asarray(build_matcher(dtype)(patches, templates))
    ref = patches.astype(np.int32) @ templates.astype(np.int32).T
    np.testing.assert_array_equal(scores, ref)
    print(f"{jnp.dtype(dtype).name}: OK, best template per patch:",
          scores.argmax(1)[:4])


if __name__ == "__main__":
  main()
