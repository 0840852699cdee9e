import numpy as np
import jax.numpy as jnp

import warpgemm_s32.ops.matmul as mm


def test_int8_tile_with_int_bias():
  m, n, k = 128, 128, 128
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.integers(-128, 128, (m, k)), dtype=jnp.int8)
  b = jnp.asarray(rng.integers(-128, 128, (n, k)), dtype=jnp.int8)
  bias = jnp.asarray(rng.integers(-100, 100, (m, n)), dtype=jnp.int32)
  out = mm.warp_matmul(a, b, bias)
  expected = bias + a.astype(jnp.int32) @ b.astype(jnp.int32).T
  np.testing.assert_array_equal(out, expected)
