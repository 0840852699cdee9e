"""Pipelined bf16 matmul for Blackwell (Pallas Mosaic GPU, tcgen05)."""

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
  max_concurrent_steps: int = 2


def _transforms(dtype, swizzle=128):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


def matmul_kernel(a, b, config: TuningConfig):
  dtype = jnp.bfloat16
  m, k = a.shape
  _, n = b.shape
  tile_m, tile_n, tile_k = config.tile_m, config.tile_n, config.tile_k
  k_iters = k // tile_k
  steps = config.max_concurrent_steps

  def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, acc_smem,
             tma_barrier, consumed_barrier, mma_done_barrier):
    m_idx = lax.axis_index("m")
    n_idx = lax.axis_index("n")
    slice_m = pl.ds(m_idx * tile_m, tile_m)
    slice_n = pl.ds(n_idx * tile_n, tile_n)

    def _loop_body(ki, _):
      slot = lax.rem(ki, steps)

      @pl.when(ki >= steps)
      def _():
        plgpu.barrier_wait(consumed_barrier.at[slot])

      slice_k = pl.ds(ki * tile_k, tile_k)
      plgpu.copy_gmem_to_smem(
          a_gmem.at[slice_m, slice_k], a_smem.at[slot], tma_barrier.at[slot]
      )
      plgpu.copy_gmem_to_smem(
          b_gmem.at[slice_k, slice_n], b_smem.at[slot], tma_barrier.at[slot]
      )
      plgpu.barrier_wait(tma_barrier.at[slot])
      plgpu.tcgen05_mma(
          acc_tmem,
          a_smem.at[slot],
          b_smem.at[slot],
          consumed_barrier.at[slot],
          accumulate=(ki > 0),
      )

      @pl.when(ki == k_iters - 1)
      def _():
        plgpu.tcgen05_commit_arrive(mma_done_barrier)

    lax.fori_loop(0, k_iters, _loop_body, None)
    plgpu.barrier_wait(mma_done_barrier)
    acc_smem[...] = plgpu.async_load_tmem(acc_tmem).astype(dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(acc_smem, out_gmem.at[slice_m, slice_n])
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), dtype),
      scratch_types=dict(
          a_smem=plgpu.SMEM((steps, tile_m, tile_k), dtype,
                            transforms=_transforms(dtype)),
          b_smem=plgpu.SMEM((steps, tile_k, tile_n), dtype,
                            transforms=_transforms(dtype)),
          acc_tmem=plgpu.TMEM((tile_m, tile_n), jnp.float32),
          acc_smem=plgpu.SMEM((tile_m, tile_n), dtype,
                              transforms=_transforms(dtype)),
          tma_barrier=plgpu.Barrier(num_arrivals=2, num_barriers=steps),
          consumed_barrier=plgpu.Barrier(
              num_arrivals=1, num_barriers=steps, orders_tensor_core=True
          ),
          mma_done_barrier=plgpu.Barrier(orders_tensor_core=True),
      ),
      grid=(m // tile_m, n // tile_n),
      grid_names=("m", "n"),
  )(a, b)


@functools.partial(jax.jit, static_argnames=("config",))
def matmul(a, b, config: TuningConfig = TuningConfig()):
  a = a.astype(jnp.bfloat16)
  b = b.astype(jnp.bfloat16)
  return matmul_kernel(a, b, config)
