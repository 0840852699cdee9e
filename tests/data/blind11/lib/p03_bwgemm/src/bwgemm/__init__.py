from bwgemm.ops.gemm import gemm

__all__ = ["gemm"]
