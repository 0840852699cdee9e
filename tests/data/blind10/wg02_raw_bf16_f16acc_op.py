"""A small bf16 GEMM built directly on Mosaic GPU WGMMA (Hopper).

The accumulator is kept in half precision to halve register pressure for the
wide-N configuration.
"""

import dataclasses
import functools

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import tile_shape
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class GemmConfig:
  tile_m: int = 128
  tile_n: int = 256
  k: int = 256
  swizzle: int = 128
  acc_dtype: jnp.dtype = jnp.float16


def build_bf16_gemm(config: GemmConfig):
  in_dtype = jnp.bfloat16
  m, n, k = config.tile_m, config.tile_n, config.k
  swizzle = config.swizzle
  nk_tile = swizzle // jnp.dtype(in_dtype).itemsize

  def kernel(ctx, a, b, out, scratch):
    a_smem, b_smem, barriers = scratch
    ctx.async_copy(
        src_ref=a,
        dst_ref=a_smem,
        swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, nk_tile)),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=b,
        dst_ref=b_smem,
        swizzle=swizzle,
        gmem_transform=mgpu.TileTransform((8, nk_tile)),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    acc_ir_dtype = utils.dtype_to_ir_type(config.acc_dtype)
    acc = mgpu.WGMMAAccumulator.zero(m, n, dtype=acc_ir_dtype)
    acc = mgpu.wgmma(acc, a_smem, b_smem, swizzle=swizzle)
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  a_shape = jax.ShapeDtypeStruct((m, k), in_dtype)
  b_shape = jax.ShapeDtypeStruct((k, n), in_dtype)
  out_shape = jax.ShapeDtypeStruct((m, n), config.acc_dtype)
  scratch = [
      jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), in_dtype),
      jax.ShapeDtypeStruct(tile_shape((k, n), (8, nk_tile)), in_dtype),
      mgpu.TMABarrier(2),
  ]
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a_shape, b_shape), out_shape, scratch
    )


@functools.partial(jax.jit, static_argnames=("config",))
def bf16_gemm(a, b, config: GemmConfig = GemmConfig()):
  return build_bf16_gemm(config)(a, b)
