"""A Hopper bf16 GEMM tile in Pallas: a float32 accumulator, as wgmma requires for bf16.

"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 128, 64
ACC_DTYPE = jnp.float32  # bf16 operands accumulate in f32 only


def gemm_tile(a, b):
  m, k = a.shape
  _, n = b.shape
  transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))

  def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, a_smem, b_smem)
      return acc_ref[...]

    acc = pl.run_scoped(scope, plgpu.ACC((TILE_M, TILE_N), ACC_DTYPE))
    o_smem[...] = acc.astype(o_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.bfloat16),
      scratch_types=[
          plgpu.SMEM((TILE_M, TILE_K), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((TILE_K, TILE_N), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((TILE_M, TILE_N), jnp.bfloat16),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(a, b)


def main():
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (TILE_M, TILE_K)), jnp.bfloat16)
  b = jnp.asarray(rng.uniform(-1, 1, (TILE_K, TILE_N)), jnp.bfloat16)
  out = np.asarray(gemm_tile(a, b), np.float32)
  ref = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
  # The f32 sums are rounded once to bf16 (8 significant bits) on the way out.
  np.testing.assert_allclose(out, ref, rtol=2 ** -7, atol=1e-2)
  print("bf16 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
