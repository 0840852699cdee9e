"""Integer Pallas warp-MMA kernels built by a factory (quantized GEMM tests)."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


class QuantGemm:
  # Warpgroup semantics is the default from jax 0.11; pin it so the test is
  # stable across upgrades.
  SEMANTICS = plgpu.LoweringSemantics.Warpgroup
  M = 128
  N = 64
  K = 128


def make_int_matmul(*, dtype, m, n, k, semantics=QuantGemm.SEMANTICS):
  """Returns a callable computing (m,k) @ (n,k).T in int32."""
  acc_dtype = (
      jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32
  )

  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(
        b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, a, b)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((m, n), acc_dtype),
      compiler_params=plgpu.CompilerParams(lowering_semantics=semantics),
  )

  def run(a, b):
    assert a.shape == (m, k) and b.shape == (n, k)
    return kernel(a, b)

  return run


class QuantGemmTest(parameterized.TestCase):

  def test_all_int_types(self):
    rng = np.random.default_rng(3)
    for name in ("int8", "uint8", "int4"):
      dtype = jnp.dtype(name)
      with self.subTest(dtype=name):
        info = jnp.iinfo(dtype)
        a = rng.integers(info.min, info.max + 1, (QuantGemm.M, QuantGemm.K))
        b = rng.integers(info.min, info.max + 1, (QuantGemm.N, QuantGemm.K))
        a, b = a.astype(dtype), b.astype(dtype)
        f = make_int_matmul(
            dtype=dtype, m=QuantGemm.M, n=QuantGemm.N, k=QuantGemm.K
        )
        out = f(a, b)
        ref = a.astype(np.int32) @ b.astype(np.int32).T
        np.testing.assert_array_equal(out, ref)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
