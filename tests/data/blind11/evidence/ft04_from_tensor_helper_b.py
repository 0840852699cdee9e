# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""int8 x int8 warp-level MMA with the accumulator built from a tensor."""

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


def build(m=128, n=128, k=128, dtype=jnp.int8):
  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
    is_signed = utils.is_signed(dtype)
    a_i8 = mgpu.FragmentedArray.load_untiled(
        a_ref, layout=layouts.lhs, is_signed=is_signed, optimized=False
    )
    b_i8 = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)),
        layout=layouts.rhs,
        is_signed=is_signed,
        optimized=False,
    )
    acc = from_tensor(jnp.zeros((m, n), jnp.int32), layouts.acc)
    acc = mgpu.mma(acc, a_i8, b_i8)
    acc.store_untiled(out_ref, optimized=False)

  a = jax.ShapeDtypeStruct((m, k), dtype)
  b = jax.ShapeDtypeStruct((n, k), dtype)
  out = jax.ShapeDtypeStruct((m, n), jnp.int32)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out, ())


def main(unused_argv=()):
  m = n = k = 128
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (m, k)).astype(np.int8)
  b = rng.integers(-128, 128, (n, k)).astype(np.int8)
  with mlir.make_ir_context(), ir.Location.unknown():
    f = build(m, n, k)
  out = f(a, b)
  np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32).T)


if __name__ == "__main__":
  main()
