"""An int8 Pallas wgmma over 40 output channels: jax checks only that N is a multiple of 8, but
PTX has no `m64n40k32` integer wgmma, so ptxas rejects the kernel ("Illegal matrix shape")."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M, CHANNELS, K = 64, 40, 128


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


def main():
  out_channels = 40  # the layer's real width; the tile computes CHANNELS of them
  rng = np.random.default_rng(0)
  x = rng.integers(-128, 128, (BLOCK_M, K)).astype(np.int8)
  w = rng.integers(-128, 128, (out_channels, K)).astype(np.int8)  # (out, in) weights
  w_tile = np.zeros((CHANNELS, K), np.int8)
  w_tile[:out_channels] = w  # zero weights for any padding channels
  out = np.asarray(conv1x1(jnp.asarray(x), jnp.asarray(w_tile)))[:, :out_channels]
  np.testing.assert_array_equal(out, x.astype(np.int32) @ w.astype(np.int32).T)
  print("int8 1x1 conv:", out_channels, "channels OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
