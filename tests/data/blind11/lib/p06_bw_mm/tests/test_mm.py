import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bw_mm.ops import mm


@pytest.mark.parametrize("m,k,n", [(128, 128, 128), (128, 256, 64)])
def test_half_matmul(m, k, n):
  a = jax.random.uniform(jax.random.key(0), (m, k), jnp.float16)
  b = jax.random.uniform(jax.random.key(1), (k, n), jnp.float16)
  out = mm.matmul(a, b, acc_dtype=jnp.float16)
  np.testing.assert_allclose(
      out.astype(jnp.float32),
      (a.astype(jnp.float32) @ b.astype(jnp.float32)),
      rtol=2e-2,
  )
