"""Pallas warp-MMA GEMM builder with a fori_loop K reduction (Warpgroup semantics)."""

import itertools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

WG = plgpu.LoweringSemantics.Warpgroup
LANE = plgpu.LoweringSemantics.Lane


def _half_acc(shape, operand_dtype):
  """Half-precision MMA accumulator. Kept for the experiments in b/...; the
  Mosaic GPU mma lowering only accumulates floats in f32, so don't use it."""
  return plgpu.layout_cast(
      jnp.zeros(shape, jnp.float16), plgpu.Layout.MMA_ACC(operand_dtype)
  )


def build_gemm(dtype, *, m, n, k, block_k, semantics=WG):
  """Returns a kernel computing (m,k) @ (n,k).T, or None if unsupported."""
  dtype = jnp.dtype(dtype)
  if jnp.issubdtype(dtype, jnp.unsignedinteger) and semantics == WG:
    # The warpgroup lowering would reinterpret u8 as s8.
    return None
  if k % block_k:
    return None
  acc_dtype = jnp.int32 if dtype == jnp.int8 else jnp.float32

  def body(x_ref, w_ref, o_ref):
    def step(kt, acc):
      ks = pl.ds(kt * block_k, block_k)
      x = plgpu.load(
          x_ref.at[:, ks], layout=plgpu.Layout.MMA_LHS(dtype), optimized=False
      )
      w = plgpu.load(
          w_ref.at[:, ks].T, layout=plgpu.Layout.MMA_RHS(dtype),
          optimized=False,
      )
      return plgpu.mma(acc, x, w)

    acc = plgpu.layout_cast(
        jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )
    acc = jax.lax.fori_loop(0, k // block_k, step, acc)
    o_ref[...] = acc

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
  )


class GuardedBuilderTest(parameterized.TestCase):

  def test_sweep(self):
    rng = np.random.default_rng(9)
    m, n = 128, 64
    for name, k in itertools.product(
        ("bfloat16", "float16", "int8", "uint8"), (128, 256)
    ):
      dtype = jnp.dtype(name)
      block_k = 32 if dtype.itemsize == 2 else 64
      kernel = build_gemm(dtype, m=m, n=n, k=k, block_k=block_k)
      if kernel is None:
        continue
      if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, (m, k)).astype(dtype)
        w = rng.integers(info.min, info.max + 1, (n, k)).astype(dtype)
        ref = x.astype(np.int32) @ w.astype(np.int32).T
      else:
        x = rng.uniform(-1, 1, (m, k)).astype(dtype)
        w = rng.uniform(-1, 1, (n, k)).astype(dtype)
        ref = x.astype(np.float32) @ w.astype(np.float32).T
      with self.subTest(dtype=name, k=k):
        np.testing.assert_allclose(kernel(x, w), ref, atol=1e-3, rtol=1e-3)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
