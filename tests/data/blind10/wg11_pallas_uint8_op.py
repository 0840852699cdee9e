"""uint8 x uint8 -> int32 matmul for Hopper (Pallas Mosaic GPU).

Used by the image retrieval pipeline: both operands are raw 8-bit pixel
intensities in [0, 255].
"""

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames=("tile_m", "tile_n", "tile_k"))
def u8_matmul(a, b, tile_m=128, tile_n=128, tile_k=128):
  """a: (m, k) uint8; b: (n, k) uint8 (K-major). Returns (m, n) int32."""
  a = a.astype(jnp.uint8)
  b = b.astype(jnp.uint8)
  m, k = a.shape
  n, _ = b.shape
  swizzle = 128
  transforms = (
      plgpu.TilingTransform((8, swizzle)),
      plgpu.SwizzleTransform(swizzle),
  )

  def kernel(a_gmem, b_gmem, o_gmem, o_smem, acc):
    pid_m = lax.axis_index("m")
    pid_n = lax.axis_index("n")

    def step(_, a_smem, b_smem):
      plgpu.wgmma(acc, a_smem, b_smem.T)
      plgpu.wgmma_wait(1)

    plgpu.emit_pipeline(
        step,
        in_specs=[
            plgpu.BlockSpec((tile_m, tile_k), lambda ki: (pid_m, ki),
                            transforms=transforms),
            plgpu.BlockSpec((tile_n, tile_k), lambda ki: (pid_n, ki),
                            transforms=transforms),
        ],
        grid=(k // tile_k,),
        max_concurrent_steps=2,
    )(a_gmem, b_gmem)
    o_smem[...] = acc[...]
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(
        o_smem, o_gmem.at[pl.ds(pid_m * tile_m, tile_m), pl.ds(pid_n * tile_n, tile_n)]
    )
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.int32),
      scratch_types=dict(
          o_smem=plgpu.SMEM((tile_m, tile_n), jnp.int32),
          acc=plgpu.ACC((tile_m, tile_n), jnp.int32),
      ),
      grid=(m // tile_m, n // tile_n),
      grid_names=("m", "n"),
  )(a, b)
