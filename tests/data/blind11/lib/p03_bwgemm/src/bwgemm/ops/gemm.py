"""Dense GEMM for sm_100."""

from ..kernels.common import tcgen05_tile


def gemm(a, b, *, acc_dtype, out_dtype=None):
  if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
    raise ValueError(f"Cannot multiply {a.shape} by {b.shape}")
  if out_dtype is None:
    out_dtype = a.dtype
  return tcgen05_tile(a, b, acc_dtype=acc_dtype, out_dtype=out_dtype)
