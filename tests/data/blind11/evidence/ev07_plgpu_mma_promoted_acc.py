# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Pallas Mosaic GPU warp-MMA body with a promoted accumulator."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def accumulator_dtype(operand_dtype):
  return jnp.promote_types(operand_dtype, jnp.float32)


def promoted_matmul_body(a_ref, b_ref, o_ref):
  """o = a @ b.T accumulated in the promoted type of the operands."""
  m, _ = a_ref.shape
  n, _ = b_ref.shape
  dtype = a_ref.dtype
  acc = plgpu.layout_cast(
      jnp.zeros((m, n), accumulator_dtype(dtype)), plgpu.Layout.MMA_ACC(dtype)
  )
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
  o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)
