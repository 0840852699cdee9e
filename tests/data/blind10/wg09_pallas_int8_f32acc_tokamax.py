"""W8A8 dense kernel (Pallas Mosaic GPU, Hopper), tokamax layout."""

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
  block_m: int = 128
  block_n: int = 128
  block_k: int = 128
  num_stages: int = 4


def _transforms(dtype, swizzle=128):
  swizzle_elems = swizzle // jnp.dtype(dtype).itemsize
  return (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )


@functools.partial(jax.jit, static_argnames=("config",))
def w8a8_dense(
    x: jax.Array,  # (m, k) int8
    w: jax.Array,  # (n, k) int8
    x_scale: jax.Array,  # (m, 1) f32
    w_scale: jax.Array,  # (1, n) f32
    *,
    config: Config = Config(),
) -> jax.Array:
  m, k = x.shape
  n, _ = w.shape
  block_m, block_n, block_k = config.block_m, config.block_n, config.block_k
  x = x.astype(jnp.int8)
  w = w.astype(jnp.int8)

  def kernel(x_gmem, w_gmem, o_gmem, o_smem):
    pid_m = lax.axis_index("m")
    pid_n = lax.axis_index("n")

    def acc_scope(acc_ref):
      def body(_, x_smem, w_smem):
        plgpu.wgmma(acc_ref, x_smem, w_smem.T)
        plgpu.wgmma_wait(1)

      plgpu.emit_pipeline(
          body,
          grid=(k // block_k,),
          in_specs=[
              plgpu.BlockSpec(
                  (block_m, block_k), lambda ki: (pid_m, ki),
                  transforms=_transforms(jnp.int8),
              ),
              plgpu.BlockSpec(
                  (block_n, block_k), lambda ki: (pid_n, ki),
                  transforms=_transforms(jnp.int8),
              ),
          ],
          max_concurrent_steps=config.num_stages,
      )(x_gmem, w_gmem)
      return acc_ref[...]

    acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n), jnp.float32))
    m_slice = pl.ds(pid_m * block_m, block_m)
    n_slice = pl.ds(pid_n * block_n, block_n)
    o_smem[...] = acc.astype(o_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem.at[m_slice, n_slice])
    plgpu.wait_smem_to_gmem(0)

  out = plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      scratch_types=[plgpu.SMEM((block_m, block_n), jnp.float32)],
      grid=(m // block_m, n // block_n),
      grid_names=("m", "n"),
  )(x, w)
  return (out * x_scale * w_scale).astype(jnp.bfloat16)
