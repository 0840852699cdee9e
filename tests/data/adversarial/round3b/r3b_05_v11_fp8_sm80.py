"""FP8 warp MMA microbenchmarks (jax 0.11), built for sm_80."""
from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

M, N, K = 128, 64, 128


def _fp8_kernel(a_dtype, b_dtype):
  def kernel(ctx, a, b, out, _):
    del ctx
    a_layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(a_dtype))
    b_layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(b_dtype))
    a_fa = mgpu.FragmentedArray.load_untiled(
        a, layout=a_layouts.lhs, optimized=False
    )
    b_fa = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b, (1, 0)),
        layout=b_layouts.rhs,
        optimized=False,
    )
    acc = mgpu.FragmentedArray.splat(
        arith.constant(ir.F32Type.get(), 0.0), (M, N), layout=a_layouts.acc
    )
    mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)
  return kernel


class Fp8WarpMmaTest(parameterized.TestCase):

  def _run(self, a_dtype, b_dtype):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (M, K)).astype(a_dtype)
    b = rng.uniform(-1, 1, (N, K)).astype(b_dtype)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    out = mgpu.as_gpu_kernel(
        _fp8_kernel(a_dtype, b_dtype), (1, 1, 1), (128, 1, 1), (a, b),
        jax.ShapeDtypeStruct((M, N), jnp.float32), (),
    )(a, b)
    np.testing.assert_allclose(out, expected, atol=1e-2, rtol=1e-2)

  def test_e4m3(self):
    self._run(jnp.float8_e4m3fn, jnp.float8_e4m3fn)

  def test_e4m3_x_e5m2(self):
    # PTX can mix the two fp8 formats in one mma.sync.
    self._run(jnp.float8_e4m3fn, jnp.float8_e5m2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
