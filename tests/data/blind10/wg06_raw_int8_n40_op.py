"""Int8 projection head (vocab slice of 40 logits) on Hopper WGMMA."""

import dataclasses
import functools

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu.utils import memref_transpose, tile_shape
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class HeadConfig:
  block_m: int = 128
  num_logits: int = 40
  hidden: int = 512
  swizzle: int = 128


def _make_kernel(cfg: HeadConfig):
  m, n, k = cfg.block_m, cfg.num_logits, cfg.hidden
  nk_tile = cfg.swizzle

  def kernel(ctx, x, w, out, scratch):
    x_smem, w_smem, barriers = scratch
    ctx.async_copy(
        src_ref=x, dst_ref=x_smem, swizzle=cfg.swizzle,
        gmem_transform=mgpu.TileTransform((8, nk_tile)),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=w, dst_ref=w_smem, swizzle=cfg.swizzle,
        gmem_transform=(
            mgpu.TileTransform((8, nk_tile)),
            mgpu.TransposeTransform((1, 0, 2, 3)),
        ),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    acc = mgpu.WGMMAAccumulator.zero(
        m, n, dtype=ir.IntegerType.get_signless(32), is_signed=True
    )
    acc = mgpu.wgmma(
        acc, x_smem, memref_transpose(w_smem, (0, 1, 3, 2)), swizzle=cfg.swizzle
    )
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  w_tiled = tile_shape((n, k), (8, nk_tile))
  scratch = [
      jax.ShapeDtypeStruct(tile_shape((m, k), (8, nk_tile)), jnp.int8),
      jax.ShapeDtypeStruct((w_tiled[1], w_tiled[0], *w_tiled[2:]), jnp.int8),
      mgpu.TMABarrier(2),
  ]
  return kernel, scratch


@functools.partial(jax.jit, static_argnames=("cfg",))
def int8_logits(x, w, cfg: HeadConfig = HeadConfig()):
  """x: (block_m, hidden) int8, w: (num_logits, hidden) int8."""
  kernel, scratch = _make_kernel(cfg)
  out_shape = jax.ShapeDtypeStruct((cfg.block_m, cfg.num_logits), jnp.int32)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, w), out_shape, scratch
    )(x, w)
