import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M = N = K = 128
DTYPE = jnp.float16


def kernel(ctx, a_ref, b_ref, acc_ref, out_ref, smem):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, optimized=False)
  acc = mgpu.FragmentedArray.load_untiled(acc_ref, layout=layouts.acc, optimized=False)
  h = mgpu.mma(acc, a, b)
  h = h.astype(utils.dtype_to_ir_type(DTYPE)).to_layout(layouts.lhs)
  mgpu.mma(acc, h, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), DTYPE), jax.ShapeDtypeStruct((N, K), DTYPE),
     jax.ShapeDtypeStruct((M, N), jnp.float32)),
    jax.ShapeDtypeStruct((M, N), jnp.float32), ())
