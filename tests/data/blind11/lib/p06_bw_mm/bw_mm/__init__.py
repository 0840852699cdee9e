"""Blackwell matmuls in Pallas Mosaic GPU."""
