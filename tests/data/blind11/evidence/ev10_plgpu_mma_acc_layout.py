# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Pallas Mosaic GPU warp-MMA body for half-precision operands."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

ACC_LAYOUT = plgpu.Layout.MMA_ACC(jnp.int8)
LHS_LAYOUT = plgpu.Layout.MMA_LHS(jnp.float16)
RHS_LAYOUT = plgpu.Layout.MMA_RHS(jnp.bfloat16)


def half_matmul_body(a_ref, b_ref, o_ref):
  """o = a @ b.T for (m, k) and (n, k) blocks of a 16-bit float type."""
  m, _ = a_ref.shape
  n, _ = b_ref.shape
  acc = plgpu.layout_cast(jnp.zeros((m, n), jnp.float32), ACC_LAYOUT)
  a = plgpu.load(a_ref, layout=LHS_LAYOUT, optimized=False)
  b = plgpu.load(b_ref.T, layout=RHS_LAYOUT, optimized=False)
  acc = plgpu.mma(acc, a, b)
  o_ref[...] = acc.astype(o_ref.dtype)
