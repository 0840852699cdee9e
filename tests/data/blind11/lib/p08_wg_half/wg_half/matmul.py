"""Half-precision single-tile matmul."""

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu

from .kernels import common


def half_matmul(x, y, out_dtype):
  (m, k), (_, n) = x.shape, y.shape
  cfg = common.TileConfig(m=m, n=n, k=k)
  itemsize = x.dtype.itemsize
  body = common.make_wgmma_body(cfg, itemsize, out_dtype)
  scratch = [
      jax.ShapeDtypeStruct(cfg.smem_shape(m, k, itemsize), x.dtype),
      jax.ShapeDtypeStruct(cfg.smem_shape(k, n, itemsize), y.dtype),
      mgpu.Barrier(arrival_count=1, num_barriers=2),
  ]
  with mlir.make_ir_context(), ir.Location.unknown():
    kernel = mgpu.as_gpu_kernel(
        body,
        grid=(1, 1, 1),
        block=(128, 1, 1),
        in_shape=(x, y),
        out_shape=jax.ShapeDtypeStruct((m, n), out_dtype),
        smem_scratch_shape=scratch,
    )
  return kernel(x, y)
