"""A LoRA adapter on Hopper in Pallas: h = x @ A (rank 32), then y = h @ B with h kept in
registers. B's rows are the adapter's rank, so B is staged with a 64-byte swizzle, whose rows
hold 32 bf16 values: one wgmma K step per row, and K = 32 is exactly one."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_M, D_IN, RANK, D_OUT = 64, 256, 32, 256
DTYPE = jnp.bfloat16
ITEMSIZE = jnp.dtype(DTYPE).itemsize
X_SWIZZLE = 64  # A_lora is (D_IN, RANK): 32 bf16 columns fit a 64-byte swizzle
B_SWIZZLE = 64  # B_lora's rows are the rank: a 64-byte swizzle row is 32 bf16 values, one K step


def transforms(swizzle):
  return (plgpu.TilingTransform((8, swizzle // ITEMSIZE)), plgpu.SwizzleTransform(swizzle))


def lora(x, a_lora, b_lora):
  def kernel(x_gmem, a_gmem, b_gmem, o_gmem, x_smem, a_smem, b_smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)

    def down(h_ref):
      plgpu.wgmma(h_ref, x_smem, a_smem)
      return h_ref[...]

    h = pl.run_scoped(down, plgpu.ACC((BLOCK_M, RANK), jnp.float32)).astype(DTYPE)

    def up(y_ref):
      plgpu.wgmma(y_ref, h, b_smem)
      return y_ref[...]

    o_gmem[...] = pl.run_scoped(up, plgpu.ACC((BLOCK_M, D_OUT), jnp.float32))

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((BLOCK_M, D_OUT), jnp.float32),
      scratch_types=[
          plgpu.SMEM((BLOCK_M, D_IN), DTYPE, transforms=transforms(X_SWIZZLE)),
          plgpu.SMEM((D_IN, RANK), DTYPE, transforms=transforms(X_SWIZZLE)),
          plgpu.SMEM((RANK, D_OUT), DTYPE, transforms=transforms(B_SWIZZLE)),
          plgpu.Barrier(num_arrivals=3),
      ],
  )(x, a_lora, b_lora)


def main():
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (BLOCK_M, D_IN)), DTYPE)
  a_lora = jnp.asarray(rng.uniform(-1, 1, (D_IN, RANK)) / 16, DTYPE)
  b_lora = jnp.asarray(rng.uniform(-1, 1, (RANK, D_OUT)), DTYPE)
  out = np.asarray(lora(x, a_lora, b_lora))
  # h is rounded to bf16 between the two products, as the kernel does.
  h = (np.asarray(x, np.float32) @ np.asarray(a_lora, np.float32)).astype(DTYPE)
  ref = np.asarray(h, np.float32) @ np.asarray(b_lora, np.float32)
  np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-2)
  print("LoRA rank", RANK, "tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
