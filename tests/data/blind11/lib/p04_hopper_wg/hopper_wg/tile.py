"""``x @ y`` for one (m, n) tile with the whole K dimension staged in SMEM."""

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

_SWIZZLE = 128


def _tiled(shape, tiling):
  return (shape[0] // tiling[0], shape[1] // tiling[1], *tiling)


def wgmma_matmul(x, y, *, acc_dtype):
  """Returns ``x @ y`` in ``acc_dtype`` for ``x: (m, k)`` and ``y: (k, n)``."""
  (m, k), (k2, n) = x.shape, y.shape
  if k != k2:
    raise ValueError(f"K mismatch: {k} != {k2}")
  nk_tile = _SWIZZLE // x.dtype.itemsize
  tiling = (8, nk_tile)

  def kernel(ctx, lhs, rhs, out, scratch):
    lhs_smem, rhs_smem, barriers = scratch
    ctx.async_copy(
        src_ref=lhs,
        dst_ref=lhs_smem,
        swizzle=_SWIZZLE,
        gmem_transform=mgpu.TileTransform(tiling),
        barrier=barriers[0],
    )
    ctx.async_copy(
        src_ref=rhs,
        dst_ref=rhs_smem,
        swizzle=_SWIZZLE,
        gmem_transform=mgpu.TileTransform(tiling),
        barrier=barriers[1],
    )
    barriers[0].wait()
    barriers[1].wait()
    acc = mgpu.WGMMAAccumulator.zero(
        m=m,
        n=n,
        dtype=utils.dtype_to_ir_type(acc_dtype),
        is_signed=utils.is_signed(acc_dtype),
    )
    acc = mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=_SWIZZLE)
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    acc.value.store_untiled(out, optimized=False)

  scratch = [
      jax.ShapeDtypeStruct(_tiled((m, k), tiling), x.dtype),
      jax.ShapeDtypeStruct(_tiled((k, n), tiling), y.dtype),
      mgpu.Barrier(arrival_count=1, num_barriers=2),
  ]
  out_shape = jax.ShapeDtypeStruct((m, n), acc_dtype)
  with mlir.make_ir_context(), ir.Location.unknown():
    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch
    )
  return f(x, y)
