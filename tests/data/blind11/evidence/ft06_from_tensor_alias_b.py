# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""uint8 x uint8 warp-level MMA; tensor helpers are reached via a module alias."""

import sys

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


def from_tensor(x, layout) -> mgpu.FragmentedArray:
  """Builds a FragmentedArray holding the (uniform) contents of `x`."""
  x = np.asarray(x)
  value = x.reshape(-1)[0]
  if not (x == value).all():
    raise NotImplementedError("from_tensor only supports uniform tensors")
  ty = utils.dtype_to_ir_type(x.dtype)
  return mgpu.FragmentedArray.splat(
      arith.constant(ty, value.item()),
      x.shape,
      layout,
      is_signed=utils.is_signed(x.dtype),
  )


def from_ref(ref, layout, dtype, *, transpose=False) -> mgpu.FragmentedArray:
  if transpose:
    ref = utils.memref_transpose(ref, (1, 0))
  return mgpu.FragmentedArray.load_untiled(
      ref, layout=layout, is_signed=utils.is_signed(dtype), optimized=False
  )


fa = sys.modules[__name__]


def build(m=128, n=128, k=128, dtype=jnp.uint8, acc_dtype=jnp.int32):

  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
    a_u8 = fa.from_ref(a_ref, layouts.lhs, dtype)
    b_u8 = fa.from_ref(b_ref, layouts.rhs, dtype, transpose=True)
    acc = fa.from_tensor(jnp.zeros((m, n), acc_dtype), layouts.acc)
    acc = mgpu.mma(acc, a_u8, b_u8)
    acc.store_untiled(out_ref, optimized=False)

  a = jax.ShapeDtypeStruct((m, k), dtype)
  b = jax.ShapeDtypeStruct((n, k), dtype)
  out = jax.ShapeDtypeStruct((m, n), acc_dtype)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out, ())


def main(unused_argv=()):
  m = n = k = 128
  rng = np.random.default_rng(0)
  a = rng.integers(0, 256, (m, k)).astype(np.uint8)
  b = rng.integers(0, 256, (n, k)).astype(np.uint8)
  with mlir.make_ir_context(), ir.Location.unknown():
    f = build(m, n, k)
  out = f(a, b)
  ref = a.astype(np.int32) @ b.astype(np.int32).T
  np.testing.assert_array_equal(out, ref)


if __name__ == "__main__":
  main()
