from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax import numpy as jnp
import numpy as np

import bwgemm


class GemmTest(parameterized.TestCase):

  @parameterized.parameters((128, 128, 128), (128, 256, 128), (128, 64, 256))
  def test_bf16_half_accumulation(self, m, k, n):
    a = jax.random.uniform(jax.random.key(0), (m, k), jnp.bfloat16)
    b = jax.random.uniform(jax.random.key(1), (k, n), jnp.bfloat16)
    out = bwgemm.gemm(a, b, acc_dtype=jnp.float16, out_dtype=jnp.bfloat16)
    expected = (a.astype(jnp.float32) @ b.astype(jnp.float32)).astype(
        jnp.bfloat16)
    np.testing.assert_allclose(
        out.astype(jnp.float32), expected.astype(jnp.float32), rtol=2e-2)


if __name__ == "__main__":
  absltest.main()
