"""Public entry point: ``warp_matmul(a, b, c) = c + a @ b.T``."""

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax.experimental.mosaic import gpu as mgpu

from ..kernels import warp_mma

_WARPGROUP = (128, 1, 1)


def warp_matmul(a, b, c):
  """Fused ``c + a @ b.T`` for one tile; ``a: (m, k)``, ``b: (n, k)``, ``c: (m, n)``."""
  m, k = a.shape
  n, _ = b.shape
  if b.shape != (n, k) or c.shape != (m, n):
    raise ValueError(f"Bad shapes: {a.shape=} {b.shape=} {c.shape=}")
  body = warp_mma.make_tile_body(a.dtype, c.dtype)
  out_shape = jax.ShapeDtypeStruct((m, n), c.dtype)
  with mlir.make_ir_context(), ir.Location.unknown():
    kernel = mgpu.as_gpu_kernel(
        body, (1, 1, 1), _WARPGROUP, (c, a, b), out_shape, ()
    )
  return kernel(c, a, b)
