"""Blackwell e5m2 GEMM with an f16 TMEM accumulator (no block scaling)."""

import dataclasses
import functools

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jax.experimental.mosaic.gpu.utils import tile_shape
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Config:
  block_m: int = 128
  block_n: int = 256
  swizzle: int = 128


def _build(cfg: Config, k: int):
  m, n = cfg.block_m, cfg.block_n
  swizzle = cfg.swizzle
  swizzle_elems = swizzle // jnp.dtype(jnp.float8_e5m2).itemsize

  def kernel(ctx, a, b, out, scratch):
    a_smem, b_smem, barriers, mma_barrier, acc = scratch
    ctx.async_copy(
        src_ref=a, dst_ref=a_smem, swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, swizzle_elems)),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=b, dst_ref=b_smem, swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, swizzle_elems)),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    with mgpu.single_thread():
      tcgen05.mma(
          acc,
          a_smem,
          mgpu.memref_transpose(b_smem, (1, 0, 3, 2)),
          a_swizzle=swizzle,
          b_swizzle=swizzle,
          accumulate=False,
      )
      tcgen05.commit_arrive(mma_barrier)
    mma_barrier.wait(orders_tensor_core=True)
    acc.load().store_untiled(out, optimized=False)

  scratch = [
      jax.ShapeDtypeStruct(tile_shape((m, k), (8, swizzle_elems)), jnp.float8_e5m2),
      jax.ShapeDtypeStruct(tile_shape((n, k), (8, swizzle_elems)), jnp.float8_e5m2),
      mgpu.TMABarrier(2),
      mgpu.Barrier(1),
      mgpu.TMEM((m, n), jnp.float16),
  ]
  return kernel, scratch


@functools.partial(jax.jit, static_argnames=("cfg",))
def e5m2_gemm(a, b, cfg: Config = Config()):
  """a: (block_m, k) e5m2, b: (block_n, k) e5m2 (K-major)."""
  a = a.astype(jnp.float8_e5m2)
  b = b.astype(jnp.float8_e5m2)
  k = a.shape[1]
  kernel, scratch = _build(cfg, k)
  out_shape = jax.ShapeDtypeStruct((cfg.block_m, cfg.block_n), jnp.float16)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), out_shape, scratch
    )(a, b)
