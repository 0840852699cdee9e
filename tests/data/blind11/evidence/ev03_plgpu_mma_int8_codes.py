# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Pallas Mosaic GPU warp-MMA body for 8-bit quantized codes."""

import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

_CODE_DTYPE = jnp.int8


def _load_codes(ref, layout):
  codes = plgpu.load(ref, layout=layout, optimized=False)
  return codes.astype(_CODE_DTYPE)


def quantized_matmul_body(a_ref, b_ref, o_ref):
  """o = a @ b.T for (m, k) and (n, k) blocks of 8-bit codes (any signedness)."""
  m, _ = a_ref.shape
  n, _ = b_ref.shape
  a = _load_codes(a_ref, plgpu.Layout.MMA_LHS(_CODE_DTYPE))
  b = _load_codes(b_ref.T, plgpu.Layout.MMA_RHS(_CODE_DTYPE))
  acc = plgpu.layout_cast(
      jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(_CODE_DTYPE)
  )
  acc = plgpu.mma(acc, a, b)
  o_ref[...] = acc.astype(o_ref.dtype)
