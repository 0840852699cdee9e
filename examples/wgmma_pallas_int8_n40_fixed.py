"""An int8 Pallas wgmma over 40 output channels, padded to 48: integer wgmma needs N of 8, 16,
24 or a multiple of 16 (the caller drops the 8 padding channels)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M, CHANNELS, K = 64, 48, 128


def conv1x1(x, w):
  transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

  def kernel(x_gmem, w_gmem, o_gmem, x_smem, w_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
    plgpu.copy_gmem_to_smem(w_gmem, w_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, x_smem, w_smem.T)
      return acc_ref[...]

    o_smem[...] = pl.run_scoped(scope, plgpu.ACC((BLOCK_M, CHANNELS), jnp.int32))
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((BLOCK_M, CHANNELS), jnp.int32),
      scratch_types=[
          plgpu.SMEM((BLOCK_M, K), jnp.int8, transforms=transforms),
          plgpu.SMEM((CHANNELS, K), jnp.int8, transforms=transforms),
          plgpu.SMEM((BLOCK_M, CHANNELS), jnp.int32),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(x, w)
