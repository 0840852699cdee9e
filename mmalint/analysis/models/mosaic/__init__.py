"""Mosaic GPU (`jax.experimental.mosaic.gpu`): memrefs, fragmented arrays, layouts, the
instruction families and kernel launches."""
