"""Binary-code similarity on Hopper: uint8 feature bytes multiplied in a Pallas wgmma.

jax emits `wgmma ... .s32.s8.s8` for uint8 SMEM operands: bytes >= 128 are read as negative and
the similarity scores are wrong, with no error.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_Q, BLOCK_D, CODE_BYTES = 64, 128, 128
FEATURE_DTYPE = jnp.uint8


def similarity(queries, database):
  transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

  def kernel(q_gmem, d_gmem, o_gmem, q_smem, d_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(q_gmem, q_smem, barrier)
    plgpu.copy_gmem_to_smem(d_gmem, d_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      # 8-bit wgmma needs a K-major B: the database tile is (d, k), transposed.
      plgpu.wgmma(acc_ref, q_smem, plgpu.transpose_ref(d_smem, (1, 0)))
      return acc_ref[...]

    o_smem[...] = pl.run_scoped(scope, plgpu.ACC((BLOCK_Q, BLOCK_D), jnp.int32))
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((BLOCK_Q, BLOCK_D), jnp.int32),
      scratch_types=[
          plgpu.SMEM((BLOCK_Q, CODE_BYTES), FEATURE_DTYPE, transforms=transforms),
          plgpu.SMEM((BLOCK_D, CODE_BYTES), FEATURE_DTYPE, transforms=transforms),
          plgpu.SMEM((BLOCK_Q, BLOCK_D), jnp.int32),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(queries, database)


def main():
  rng = np.random.default_rng(0)
  q = rng.integers(0, 256, (BLOCK_Q, CODE_BYTES), dtype=np.uint8)  # full byte range
  d = rng.integers(0, 256, (BLOCK_D, CODE_BYTES), dtype=np.uint8)
  scores = np.asarray(similarity(jnp.asarray(q, FEATURE_DTYPE), jnp.asarray(d, FEATURE_DTYPE)))
  ref = q.astype(np.int64) @ d.astype(np.int64).T
  np.testing.assert_array_equal(scores, ref)
  print("byte-code similarity: OK, max score", scores.max())


if __name__ == "__main__":
  main()
