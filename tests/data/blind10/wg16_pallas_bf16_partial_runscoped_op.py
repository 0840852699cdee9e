"""Persistent-style bf16 matmul for Hopper (Pallas Mosaic GPU)."""

import dataclasses
import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class TuningConfig:
  tile_m: int = 128
  tile_n: int = 128
  tile_k: int = 64
  max_concurrent_steps: int = 4


def matmul_kernel(a, b, config: TuningConfig):
  dtype = a.dtype
  if a.dtype != b.dtype:
    raise ValueError(f"Mixed dtypes: {a.dtype} vs {b.dtype}")
  m, k = a.shape
  _, n = b.shape
  tile_m, tile_n, tile_k = config.tile_m, config.tile_n, config.tile_k
  swizzle = 128
  swizzle_elems = swizzle // jnp.dtype(dtype).itemsize
  transforms = (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )

  def kernel(a_gmem, b_gmem, out_gmem, out_smem):
    m_idx = lax.axis_index("m")
    n_idx = lax.axis_index("n")

    @functools.partial(
        pl.run_scoped, acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)
    )
    def _acc_scope(acc_ref):
      def mma_body(_, a_smem, b_smem):
        plgpu.wgmma(acc_ref, a_smem, b_smem)
        plgpu.wgmma_wait(1)

      plgpu.emit_pipeline(
          mma_body,
          grid=(k // tile_k,),
          in_specs=[
              plgpu.BlockSpec((tile_m, tile_k), lambda ki: (m_idx, ki),
                              transforms=transforms),
              plgpu.BlockSpec((tile_k, tile_n), lambda ki: (ki, n_idx),
                              transforms=transforms),
          ],
          max_concurrent_steps=config.max_concurrent_steps,
      )(a_gmem, b_gmem)
      out_smem[...] = acc_ref[...].astype(dtype)

    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(
        out_smem,
        out_gmem.at[pl.ds(m_idx * tile_m, tile_m), pl.ds(n_idx * tile_n, tile_n)],
    )
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), dtype),
      scratch_types=[plgpu.SMEM((tile_m, tile_n), dtype, transforms=transforms)],
      grid=(m // tile_m, n // tile_n),
      grid_names=("m", "n"),
  )(a, b)


@functools.partial(jax.jit, static_argnames=("config",))
def matmul(a, b, config: TuningConfig = TuningConfig()):
  return matmul_kernel(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16), config)
