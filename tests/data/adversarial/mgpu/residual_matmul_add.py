# Residual-style update out = c + a @ b using the module-level mma entry
# point, with a small helper that mirrors the math notation.

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jaxlib.mlir import ir
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.core import as_gpu_kernel
from jax.experimental.mosaic.gpu.mma import MMALayouts, mma
import jax.numpy as jnp
import numpy as np


TILE = 128


def _matmul_add(a, b, c):
  """Returns a @ b + c."""
  return mma(a, b, c)


def _load_operands(a_ref, b_ref, c_ref, dtype):
  layouts = MMALayouts(utils.dtype_to_ir_type(dtype))
  a = fa.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, optimized=False
  )
  b = fa.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      optimized=False,
  )
  c = fa.FragmentedArray.load_untiled(
      c_ref, layout=layouts.acc, optimized=False
  )
  return a, b, c


def residual_kernel(ctx, a_ref, b_ref, c_ref, out_ref, _, *, dtype):
  a, b, c = _load_operands(a_ref, b_ref, c_ref, dtype)
  _matmul_add(a, b, c).store_untiled(out_ref, optimized=False)


class ResidualMmaTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(7)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  @parameterized.parameters(jnp.bfloat16, jnp.float16)
  def test_residual(self, dtype):
    a = self.prng.uniform(-1, 1, (TILE, TILE)).astype(dtype)
    b = self.prng.uniform(-1, 1, (TILE, TILE)).astype(dtype)
    c = self.prng.uniform(-1, 1, (TILE, TILE)).astype(jnp.float32)
    f = as_gpu_kernel(
        functools.partial(residual_kernel, dtype=dtype),
        (1, 1, 1), (128, 1, 1), (a, b, c), c, (),
    )
    expected = c + a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(f(a, b, c), expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
