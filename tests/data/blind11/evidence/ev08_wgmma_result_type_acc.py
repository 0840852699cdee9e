# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""WGMMA with a register left operand and an accumulator picked by promotion."""

from jax._src import dtypes
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp


def accumulator_type(dtype):
  return jnp.result_type(dtype, jnp.int32)


def register_lhs_matmul(lhs, rhs_smem, out, *, dtype, swizzle: int = 128):
  """out = lhs @ rhs.T.

  Args:
    lhs: an (m, k) GMEM ref of `dtype`.
    rhs_smem: the (n, k) right operand, staged by the caller into SMEM as
      (k // tile, n // tile, tile, tile) swizzled tiles, K-major.
    out: an (m, n) GMEM ref of `accumulator_type(dtype)`.
    dtype: the operand dtype.
    swizzle: the swizzle used when staging `rhs_smem`.
  """
  m, _ = ir.MemRefType(lhs.type).shape
  _, n_tiles, _, tile = ir.MemRefType(rhs_smem.type).shape
  acc_dtype = accumulator_type(dtype)
  if dtypes.itemsize_bits(dtype) == 8:
    layout = fa.WGMMA_LAYOUT_8BIT
  else:
    layout = fa.WGMMA_LAYOUT
  lhs_regs = fa.FragmentedArray.load_untiled(
      lhs, layout=layout, is_signed=utils.is_signed(dtype), optimized=False
  )
  acc = mgpu.WGMMAAccumulator.zero(
      m=m,
      n=n_tiles * tile,
      dtype=utils.dtype_to_ir_type(acc_dtype),
      is_signed=utils.is_signed(acc_dtype),
  )
  rhs_t = utils.memref_transpose(rhs_smem, (0, 1, 3, 2))
  acc = mgpu.wgmma(acc, lhs_regs, rhs_t, swizzle=swizzle)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out, optimized=False)
