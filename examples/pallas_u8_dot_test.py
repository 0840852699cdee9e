"""Tests for an 8-bit integer dot-product tile in Pallas Mosaic GPU.

The kernel computes a @ b.T for (M, K) and (N, K) 8-bit integer operands
with the warp-level `plgpu.mma` and exact integer accumulation, for signed
and unsigned inputs over their full ranges.

Run on an sm_80+ GPU:  python pallas_u8_dot_test.py
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import absltest, parameterized
from jax.experimental.pallas import mosaic_gpu as plgpu

LOWERING_SEMANTICS = plgpu.LoweringSemantics.Lane


class IntegerMmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if jax.default_backend() != "gpu":
      self.skipTest("needs an NVIDIA GPU (sm_80+)")

  @parameterized.parameters(jnp.int8, jnp.uint8)
  def test_int_dot(self, dtype):
    m, n, k = 128, 64, 256
    dtype = jnp.dtype(dtype)
    # Unsigned inputs give non-negative sums: accumulate them unsigned.
    is_signed = jnp.issubdtype(dtype, jnp.signedinteger)
    acc_dtype = jnp.int32 if is_signed else jnp.uint32

    @functools.partial(
        plgpu.kernel,
        out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
        compiler_params=plgpu.CompilerParams(
            lowering_semantics=LOWERING_SEMANTICS),
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(
          jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype),
                     optimized=False)
      o_ref[...] = plgpu.mma(acc, a, b)

    prng = np.random.default_rng(0)
    iinfo = jnp.iinfo(dtype)
    a = prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
    b = prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
    res = kernel(a, b)
    ref = a.astype(np.int64) @ b.astype(np.int64).T
    np.testing.assert_array_equal(np.asarray(res, np.int64), ref)


if __name__ == "__main__":
  absltest.main()
