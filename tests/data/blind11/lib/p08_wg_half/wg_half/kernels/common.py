"""Mosaic GPU building blocks shared by the wg_half kernels."""

import dataclasses

from jax._src.lib.mlir.dialects import nvvm
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils


@dataclasses.dataclass(frozen=True)
class TileConfig:
  m: int
  n: int
  k: int
  swizzle: int = 128

  def tiling(self, itemsize):
    return (8, self.swizzle // itemsize)

  def smem_shape(self, rows, cols, itemsize):
    t = self.tiling(itemsize)
    return (rows // t[0], cols // t[1], *t)


def make_wgmma_body(cfg, itemsize, out_dtype):
  """Kernel body computing ``out = lhs @ rhs`` with a single WGMMA chain."""
  tiling = cfg.tiling(itemsize)

  def body(ctx, lhs, rhs, out, scratch):
    lhs_smem, rhs_smem, barriers = scratch
    for src, dst, barrier in ((lhs, lhs_smem, barriers[0]),
                              (rhs, rhs_smem, barriers[1])):
      ctx.async_copy(
          src_ref=src,
          dst_ref=dst,
          swizzle=cfg.swizzle,
          gmem_transform=mgpu.TileTransform(tiling),
          barrier=barrier,
      )
    barriers[0].wait()
    barriers[1].wait()
    acc = mgpu.WGMMAAccumulator.zero(
        cfg.m, cfg.n, dtype=utils.dtype_to_ir_type(out_dtype)
    )
    acc = mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=cfg.swizzle)
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  return body
