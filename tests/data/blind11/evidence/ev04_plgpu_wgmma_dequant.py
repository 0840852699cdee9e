# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Pallas Mosaic GPU WGMMA body for symmetric-quantized operands."""

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _dequant_scale(a_dtype, b_dtype):
  return 1.0 / (float(jnp.iinfo(a_dtype).max) * float(jnp.iinfo(b_dtype).max))


def dequant_matmul_body(a_smem, b_smem, o_ref):
  """o = dequant(a @ b.T) for (m, k) and (n, k) K-major SMEM blocks."""
  m, _ = a_smem.shape
  n, _ = b_smem.shape
  acc_dtype = jnp.promote_types(a_smem.dtype, jnp.float32)
  scale = _dequant_scale(a_smem.dtype, b_smem.dtype)

  def scope(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, plgpu.transpose_ref(b_smem, (1, 0)))
    return acc_ref[...]

  acc = pl.run_scoped(scope, plgpu.ACC((m, n), acc_dtype))
  o_ref[...] = (acc * scale).astype(o_ref.dtype)
