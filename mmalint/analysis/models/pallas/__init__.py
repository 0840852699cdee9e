"""Pallas (`jax.experimental.pallas`) and its Mosaic GPU backend (`plgpu`)."""
