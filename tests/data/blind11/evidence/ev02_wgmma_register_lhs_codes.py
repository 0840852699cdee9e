# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""WGMMA with the left operand held in registers (byte-wide codes)."""

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils


def register_lhs_matmul(lhs, rhs_smem, out, *, swizzle: int = 128):
  """out = lhs @ rhs.T.

  Args:
    lhs: an (m, k) GMEM ref.
    rhs_smem: the (n, k) right operand, staged by the caller into SMEM as
      (k // tile, n // tile, tile, tile) swizzled tiles, K-major.
    out: an (m, n) GMEM ref.
    swizzle: the swizzle used when staging `rhs_smem`.
  """
  m, _ = ir.MemRefType(lhs.type).shape
  k_steps, n_tiles, _, tile = ir.MemRefType(rhs_smem.type).shape
  n = n_tiles * tile
  lhs_regs = fa.FragmentedArray.load_untiled(
      lhs, layout=fa.WGMMA_LAYOUT_8BIT, is_signed=True, optimized=False
  )
  acc = mgpu.WGMMAAccumulator.zero(m=m, n=n)
  rhs_t = utils.memref_transpose(rhs_smem, (0, 1, 3, 2))
  acc = mgpu.wgmma(acc, lhs_regs, rhs_t, swizzle=swizzle)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out, optimized=False)
