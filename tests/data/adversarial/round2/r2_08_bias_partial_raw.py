"""int8 GEMM + int32 bias, warp MMA, kernel specialised with functools.partial."""

import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


def int_gemm_bias_kernel(
    ctx, a_ref, b_ref, bias_ref, out_ref, scratch, *, dtype, m_warps
):
  del ctx, scratch
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=True, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=True,
      optimized=False,
  )
  # Bias doubles as the initial accumulator.
  acc = mgpu.FragmentedArray.load_untiled(
      bias_ref, layout=layouts.acc, optimized=False
  )
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


class IntGemmBiasTest(parameterized.TestCase):

  @parameterized.parameters(1, 2, 4)
  def test_int8_bias(self, m_warps):
    m, n, k = 128, 64, 256
    dtype = jnp.int8
    rng = np.random.default_rng(m_warps)
    a = rng.integers(-128, 128, (m, k)).astype(dtype)
    b = rng.integers(-128, 128, (k, n)).astype(dtype)
    bias = rng.integers(-1000, 1000, (m, n)).astype(jnp.int32)
    kernel = functools.partial(
        int_gemm_bias_kernel, dtype=dtype, m_warps=m_warps
    )
    out = mgpu.as_gpu_kernel(
        kernel,
        (1, 1, 1),
        (128, 1, 1),
        (a, b, bias),
        jax.ShapeDtypeStruct((m, n), jnp.int32),
        (),
    )(a, b, bias)
    expected = bias + a.astype(np.int32) @ b.astype(np.int32)
    np.testing.assert_array_equal(out, expected)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
