import numpy as np
import jax.numpy as jnp

import warpgemm.ops.matmul as mm


def test_int8_tile_with_float_bias():
  m, n, k = 128, 128, 128
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.integers(-128, 128, (m, k)), dtype=jnp.int8)
  b = jnp.asarray(rng.integers(-128, 128, (n, k)), dtype=jnp.int8)
  bias = jnp.asarray(rng.uniform(-1, 1, (m, n)), dtype=jnp.float32)
  out = mm.warp_matmul(a, b, bias)
  expected = bias + a.astype(jnp.float32) @ b.astype(jnp.float32).T
  np.testing.assert_allclose(out, expected, atol=1e-3)
