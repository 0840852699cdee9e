"""Single-tile WGMMA matmuls written directly against Mosaic GPU."""

from hopper_wg.tile import wgmma_matmul

__all__ = ["wgmma_matmul"]
