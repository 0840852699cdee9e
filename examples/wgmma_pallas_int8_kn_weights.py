"""An int8 Pallas GEMM on Hopper whose weight tile is staged in SMEM as (K, N), the way the
weights are stored: wgmma reads 8-bit operands K-major only (only 16-bit operands may be
transposed), so B has to live in SMEM as (N, K) and be passed as its transpose."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M, BLOCK_N, K = 64, 128, 128


def int8_linear(x, w):
  """x: (BLOCK_M, K) int8 activations; w: (K, BLOCK_N) int8 weights."""
  transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

  def kernel(x_gmem, w_gmem, o_gmem, x_smem, w_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
    plgpu.copy_gmem_to_smem(w_gmem, w_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, x_smem, w_smem)
      return acc_ref[...]

    o_smem[...] = pl.run_scoped(scope, plgpu.ACC((BLOCK_M, BLOCK_N), jnp.int32))
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((BLOCK_M, BLOCK_N), jnp.int32),
      scratch_types=[
          plgpu.SMEM((BLOCK_M, K), jnp.int8, transforms=transforms),
          plgpu.SMEM((K, BLOCK_N), jnp.int8, transforms=transforms),
          plgpu.SMEM((BLOCK_M, BLOCK_N), jnp.int32),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(x, w)


def main():
  rng = np.random.default_rng(0)
  x = rng.integers(-128, 128, (BLOCK_M, K)).astype(np.int8)
  w = rng.integers(-128, 128, (K, BLOCK_N)).astype(np.int8)  # stored (K, N), as the layer keeps it
  out = np.asarray(int8_linear(jnp.asarray(x), jnp.asarray(w)))
  np.testing.assert_array_equal(out, x.astype(np.int32) @ w.astype(np.int32))
  print("int8 linear tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
