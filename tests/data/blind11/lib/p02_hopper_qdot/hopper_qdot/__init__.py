"""Quantized dot products for Hopper built on Pallas Mosaic GPU."""

from hopper_qdot.ops.qmatmul import qmatmul

__all__ = ["qmatmul"]
