# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Warp-level MMA tile for byte-wide operands."""

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

def byte_tile_matmul(a_ref, b_ref, out_ref):
  """out = a @ b.T for (m, k) x (n, k) blocks of one-byte elements."""
  layouts = mgpu.MMALayouts(ir.IntegerType.get_signless(8))
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      optimized=False,
  )
  (m, _), (_, n) = a.shape, b.shape
  acc = mgpu.FragmentedArray.splat(
      arith.constant(ir.F32Type.get(), 0.0), (m, n), layouts.acc
  )
  acc = mgpu.mma(acc, a, b)
  acc.store_untiled(out_ref, optimized=False)
