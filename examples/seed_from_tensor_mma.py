"""The mission's own example, verbatim: a warp-level int8 matmul with Mosaic GPU.

The two lines at the end of `kernel` are the seed's, with `fa` and `mma` imported from jax's
Mosaic GPU as their names suggest:

    acc = fa.from_tensor(jnp.zeros((m, n), jnp.float32))
    acc = mma.mma(a_i8, b_i8, acc)

As written they fail four times over, each mistake hiding the next one:

1. jax has no `from_tensor` (0.10, 0.11, 0.12): `fa.from_tensor` raises AttributeError (MMA501);
2. `from jax.experimental.mosaic.gpu import mma` is the function, not the module, so `mma.mma`
   raises AttributeError too (MMA503);
3. `mma` takes the accumulator first: with it last, jax compares the wrong pair and raises
   `ValueError: Dtype mismatch: i8 != f32` (MMA105);
4. int8 operands accumulate in signed int32 only: a float32 accumulator raises
   `NotImplementedError: Only s32 accumulator supported for integer operands.` (MMA101).

`seed_from_tensor_mma_fixed.py` is the same program with the four fixed.

Run on an sm_80+ GPU:  python seed_from_tensor_mma.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import mma
from jax.experimental.mosaic.gpu import utils

m, n, k = 128, 128, 128


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  del ctx, smem  # Operands are read from GMEM: no TMA, no shared memory.
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  a_i8 = fa.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=True, optimized=False
  )
  b_t = utils.memref_transpose(b_ref, (1, 0))  # (n, k) -> (k, n) view
  b_i8 = fa.FragmentedArray.load_untiled(
      b_t, layout=layouts.rhs, is_signed=True, optimized=False
  )
  acc = fa.from_tensor(jnp.zeros((m, n), jnp.float32))
  acc = mma.mma(a_i8, b_i8, acc)
  acc.store_untiled(out_ref, optimized=False)


def main():
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (m, k)).astype(np.int8)
  b = rng.integers(-128, 128, (n, k)).astype(np.int8)
  with mlir.make_ir_context(), ir.Location.unknown():
    matmul = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((m, k), jnp.int8), jax.ShapeDtypeStruct((n, k), jnp.int8)),
        jax.ShapeDtypeStruct((m, n), jnp.int32), (),
    )
  out = np.asarray(matmul(a, b))
  np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32).T)
  print("int8 matmul: OK")


if __name__ == "__main__":
  main()
