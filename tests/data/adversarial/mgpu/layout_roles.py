# Porting a WGMMA kernel's register path to warp-level MMA.

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


class WarpMmaPortTest(parameterized.TestCase):

  def setUp(self):
    if not jtu.test_device_matches(["cuda"]):
      self.skipTest("Only works on GPU")
    super().setUp()
    self.prng = np.random.default_rng(11)
    self.context = mlir.make_ir_context()
    self.enter_context(self.context)
    self.enter_context(ir.Location.unknown())

  def _run(self, kernel, a, b):
    m, n = a.shape[0], b.shape[0]
    out_shape = jax.ShapeDtypeStruct((m, n), jnp.float32)
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), out_shape, ()
    )(a, b)

  @parameterized.parameters(jnp.float16, jnp.bfloat16)
  def test_operands_from_gmem(self, dtype):
    m, n, k = 128, 128, 64

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      load = functools.partial(
          mgpu.FragmentedArray.load_untiled, optimized=False
      )
      a = load(a_ref, layout=layouts.lhs)
      b = load(utils.memref_transpose(b_ref, (1, 0)), layout=layouts.lhs)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(ir.F32Type.get(), 0.0), (m, n), layout=layouts.acc
      )
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(self._run(kernel, a, b), expected, atol=1e-5)

  def test_wgmma_style_register_layouts(self):
    m, n, k = 128, 128, 128
    dtype = jnp.float16

    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(ir.F16Type.get())
      # Same register layouts the WGMMA version of this kernel used.
      acc = mgpu.FragmentedArray.splat(
          arith.constant(ir.F32Type.get(), 0.0), (m, n),
          layout=mgpu.WGMMA_LAYOUT,
      )
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=mgpu.WGMMA_LAYOUT, optimized=False
      )
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
          optimized=False,
      )
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(self._run(kernel, a, b), expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
