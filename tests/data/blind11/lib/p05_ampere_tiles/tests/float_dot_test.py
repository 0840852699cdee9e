from absl.testing import absltest
from absl.testing import parameterized
from jax import numpy as jnp
import numpy as np

from ampere_tiles.ops import tile_dot


class FloatTileDotTest(parameterized.TestCase):

  @parameterized.parameters(8, 16, 64)
  def test_bf16(self, n):
    m, k = 128, 128
    prng = np.random.default_rng(1)
    a = prng.uniform(-1, 1, (m, k)).astype(jnp.bfloat16)
    b = prng.uniform(-1, 1, (n, k)).astype(jnp.bfloat16)
    res = tile_dot(a, b, acc_dtype=jnp.float32)
    ref = a.astype(np.float32) @ b.T.astype(np.float32)
    np.testing.assert_allclose(res, ref, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main()
