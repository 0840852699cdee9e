# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Warp-level MMA building blocks for byte-quantized GEMM tiles."""

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def _byte_layouts(m_warps: int | None = None) -> mgpu.MMALayouts:
  byte = ir.IntegerType.get_signless(8)
  if m_warps is None:
    return mgpu.MMALayouts(byte)
  return mgpu.MMALayouts(byte, m_warps=m_warps)


def load_codes(ref, layout, *, transpose: bool = False) -> mgpu.FragmentedArray:
  if transpose:
    ref = utils.memref_transpose(ref, (1, 0))
  return mgpu.FragmentedArray.load_untiled(
      ref, layout=layout, is_signed=True, optimized=False
  )


def quantized_tile_matmul(a_ref, b_ref, out_ref):
  """Writes `a @ b.T` for an (m, k) x (n, k) pair of quantized blocks.

  The tile is processed by a single warpgroup (128 threads).
  """
  layouts = _byte_layouts()
  a = load_codes(a_ref, layouts.lhs)
  b = load_codes(b_ref, layouts.rhs, transpose=True)
  (m, _), (_, n) = a.shape, b.shape
  zero = arith.constant(ir.F32Type.get(), 0.0)
  acc = mgpu.FragmentedArray.splat(zero, (m, n), layouts.acc)
  acc = mgpu.mma(acc, a, b)
  acc.store_untiled(out_ref, optimized=False)
