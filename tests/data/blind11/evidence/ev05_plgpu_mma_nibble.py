# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Pallas Mosaic GPU warp-MMA body for 4-bit (nibble) weights."""

import functools

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

_NIBBLE = jnp.int4

lhs_layout = functools.partial(plgpu.Layout.MMA_LHS, _NIBBLE)
rhs_layout = functools.partial(plgpu.Layout.MMA_RHS, _NIBBLE)
acc_layout = functools.partial(plgpu.Layout.MMA_ACC, _NIBBLE)


def nibble_matmul_body(x_ref, w_ref, o_ref):
  """o += x @ w.T where both blocks hold packed 4-bit values."""
  m, _ = x_ref.shape
  n, _ = w_ref.shape
  x = plgpu.load(x_ref, layout=lhs_layout(), optimized=False)
  w = plgpu.load(w_ref.T, layout=rhs_layout(), optimized=False)
  acc = plgpu.layout_cast(jnp.zeros((m, n), jnp.float32), acc_layout())
  acc = plgpu.mma(acc, x, w)
  o_ref[...] = acc.astype(o_ref.dtype)
