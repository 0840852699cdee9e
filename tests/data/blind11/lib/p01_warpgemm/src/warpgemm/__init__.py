"""Warp-level (mma.sync) GEMM tiles written with Mosaic GPU."""

from .ops.matmul import warp_matmul

__all__ = ["warp_matmul"]
