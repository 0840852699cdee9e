from .gemm import gemm
