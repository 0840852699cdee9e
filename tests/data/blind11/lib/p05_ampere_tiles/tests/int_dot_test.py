from absl.testing import absltest
from jax import numpy as jnp
import numpy as np

from ampere_tiles.ops import tile_dot


class IntTileDotTest(absltest.TestCase):

  def test_int8(self):
    m, k, n = 128, 128, 8
    prng = np.random.default_rng(0)
    a = prng.integers(-128, 128, (m, k)).astype(jnp.int8)
    b = prng.integers(-128, 128, (n, k)).astype(jnp.int8)
    res = tile_dot(a, b, acc_dtype=jnp.int32)
    ref = a.astype(np.int32) @ b.T.astype(np.int32)
    np.testing.assert_array_equal(res, ref)


if __name__ == "__main__":
  absltest.main()
