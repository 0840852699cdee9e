"""matlib: one Pallas Mosaic GPU warp-MMA op, `matmul`, for bf16, f16 and int8 tiles."""

from matlib.ops import M, N, K, matmul

__all__ = ["K", "M", "N", "matmul"]
