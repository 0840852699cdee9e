from absl.testing import absltest
import jax
from jax import numpy as jnp
import numpy as np

from hopper_qdot import qmatmul


class QMatmulTest(absltest.TestCase):

  def test_uint8_activations(self):
    m, k, n = 64, 128, 64
    x = jax.random.randint(
        jax.random.key(0), (m, k), minval=0, maxval=256, dtype=jnp.int32
    ).astype(jnp.uint8)
    w = jax.random.randint(
        jax.random.key(1), (n, k), minval=0, maxval=256, dtype=jnp.int32
    ).astype(jnp.uint8)
    out = qmatmul(x, w, out_dtype=jnp.int32)
    expected = x.astype(jnp.int32) @ w.astype(jnp.int32).T
    np.testing.assert_array_equal(out, expected)


if __name__ == "__main__":
  absltest.main()
