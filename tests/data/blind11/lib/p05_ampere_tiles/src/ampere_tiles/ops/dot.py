"""``tile_dot``: a single (m, n) output tile of ``a @ b.T``."""

from ..kernels.common import mma_tile


def tile_dot(a, b, *, acc_dtype):
  if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
    raise ValueError(f"Incompatible operands: {a.shape} and {b.shape}")
  if a.dtype != b.dtype:
    raise TypeError(f"Operand dtypes differ: {a.dtype} and {b.dtype}")
  return mma_tile(a, b, acc_dtype)
