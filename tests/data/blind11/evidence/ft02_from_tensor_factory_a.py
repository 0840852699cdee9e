# Copyright 2026 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""bf16 warp-level MMA using a small FragmentedArray factory class."""

import jax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class Frags:
  """Helpers that turn host values and refs into FragmentedArrays."""

  @staticmethod
  def from_tensor(x, layout) -> mgpu.FragmentedArray:
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

  @staticmethod
  def from_ref(ref, layout, dtype, *, transpose=False) -> mgpu.FragmentedArray:
    if transpose:
      ref = utils.memref_transpose(ref, (1, 0))
    return mgpu.FragmentedArray.load_untiled(
        ref, layout=layout, is_signed=utils.is_signed(dtype), optimized=False
    )


def build(m=128, n=128, k=128, dtype=jnp.bfloat16):

  def kernel(ctx, a_ref, b_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
    a = Frags.from_ref(a_ref, layouts.lhs, dtype)
    b = Frags.from_ref(b_ref, layouts.rhs, dtype, transpose=True)
    acc = Frags.from_tensor(jnp.zeros((m, n), jnp.float32), layouts.acc)
    acc = mgpu.mma(a, b, acc)
    acc.store_untiled(out_ref, optimized=False)

  a = jax.ShapeDtypeStruct((m, k), dtype)
  b = jax.ShapeDtypeStruct((n, k), dtype)
  out = jax.ShapeDtypeStruct((m, n), jnp.float32)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out, ())


def main(unused_argv=()):
  m = n = k = 128
  rng = np.random.default_rng(0)
  a = rng.uniform(-1, 1, (m, k)).astype(jnp.bfloat16)
  b = rng.uniform(-1, 1, (n, k)).astype(jnp.bfloat16)
  with mlir.make_ir_context(), ir.Location.unknown():
    f = build(m, n, k)
  out = f(a, b)
  ref = a.astype(np.float32) @ b.astype(np.float32).T
  np.testing.assert_allclose(out, ref, atol=1e-5)


if __name__ == "__main__":
  main()
