"""The mission's own example with its four mistakes fixed: a warp-level int8 matmul.

`seed_from_tensor_mma.py` wrote the accumulator and the call as the seed does:

    acc = fa.from_tensor(jnp.zeros((m, n), jnp.float32))
    acc = mma.mma(a_i8, b_i8, acc)

Here the accumulator is built with a constructor jax has (`FragmentedArray.splat`), as a signed
int32 zero in the accumulator layout, and `mma` (the function jax re-exports) is called with the
accumulator first. The kernel builds on jax 0.10, 0.11 and 0.12 and emits
`mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32`.

Run on an sm_80+ GPU:  python seed_from_tensor_mma_fixed.py
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
  i32 = ir.IntegerType.get_signless(32)
  acc = fa.FragmentedArray.splat(
      utils.c(0, i32), (m, n), layout=layouts.acc, is_signed=True
  )
  acc = mma(acc, a_i8, b_i8)
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
