from absl.testing import absltest
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np

import wg_half


class HalfMatmulTest(parameterized.TestCase):

  @parameterized.product(
      out_dtype=(jnp.float16, jnp.float32),
      shape=((64, 64, 64), (128, 128, 64), (64, 192, 128)),
  )
  def test_fp16(self, out_dtype, shape):
    m, n, k = shape
    prng = np.random.default_rng(1234)
    x = prng.uniform(-1, 1, (m, k)).astype(jnp.float16)
    y = prng.uniform(-1, 1, (k, n)).astype(jnp.float16)
    z = wg_half.half_matmul(x, y, out_dtype)
    ref = x.astype(np.float32) @ y.astype(np.float32)
    atol = 2e-2 if out_dtype == jnp.float16 else 5e-6
    np.testing.assert_allclose(np.asarray(z, np.float32), ref, atol=atol)


if __name__ == "__main__":
  absltest.main()
