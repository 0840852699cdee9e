"""mmalint: a static checker for MMA calls in JAX Mosaic GPU and Pallas Mosaic GPU kernels."""

__version__ = "0.1.0"
