from .matmul import half_matmul

__all__ = ["half_matmul"]
