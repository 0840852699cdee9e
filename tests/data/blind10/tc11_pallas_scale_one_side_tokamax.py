"""MXFP8 activation-scaled matmul for Blackwell (tokamax-style Pallas kernel).

Only the activations are block-scaled; the weights were dequantized to plain
e4m3 when the checkpoint was converted.
"""

import dataclasses
import functools

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
  block_m: int = 128
  block_n: int = 128
  block_k: int = 256
  scale_block: int = 32


def _tile_swizzle(dtype, swizzle=128):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


@functools.partial(jax.jit, static_argnames=("config",))
def mxfp8_act_scaled_matmul(x, x_scales, w, *, config: Config = Config()):
  """x: (m, k) e4m3, x_scales: e8m0 blocks for x, w: (n, k) e4m3."""
  x = x.astype(jnp.float8_e4m3fn)
  w = w.astype(jnp.float8_e4m3fn)
  m, k = config.block_m, config.block_k
  n = config.block_n

  def kernel(x_smem, w_smem, xs_smem, out_ref, barrier_ref, acc_tmem,
             xs_tmem):
    plgpu.async_copy_scales_to_tmem(xs_smem, xs_tmem)
    plgpu.tcgen05_mma(
        acc_tmem,
        x_smem,
        plgpu.transpose_ref(w_smem, (1, 0)),
        a_scale=xs_tmem,
        accumulate=False,
    )
    plgpu.tcgen05_commit_arrive(barrier_ref)
    plgpu.barrier_wait(barrier_ref)
    out_ref[...] = plgpu.async_load_tmem(acc_tmem)

  return pl.pallas_call(
      kernel,
      in_specs=(
          plgpu.BlockSpec(memory_space=plgpu.SMEM,
                          transforms=_tile_swizzle(jnp.float8_e4m3fn)),
          plgpu.BlockSpec(memory_space=plgpu.SMEM,
                          transforms=_tile_swizzle(jnp.float8_e4m3fn)),
          plgpu.BlockSpec(memory_space=plgpu.SMEM),
      ),
      out_specs=plgpu.BlockSpec(transforms=_tile_swizzle(jnp.float32)),
      out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
      scratch_shapes=[
          plgpu.Barrier(orders_tensor_core=True),
          plgpu.TMEM((m, n), jnp.float32),
          plgpu.TMEM(
              (m, k // config.scale_block),
              jnp.float8_e8m0fnu,
              layout=plgpu.TMEMLayout.SCALES_LAYOUT,
          ),
      ],
      compiler_params=plgpu.CompilerParams(),
  )(x, w, x_scales)
