import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hopper_wg import wgmma_matmul


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (128, 128, 128), (64, 256, 128)])
def test_bf16_matmul_half_out(m, n, k):
  kx, ky = jax.random.split(jax.random.key(0))
  x = jax.random.uniform(kx, (m, k), jnp.float32, -1, 1).astype(jnp.bfloat16)
  y = jax.random.uniform(ky, (k, n), jnp.float32, -1, 1).astype(jnp.bfloat16)
  z = wgmma_matmul(x, y, acc_dtype=jnp.float16)
  ref = x.astype(jnp.float32) @ y.astype(jnp.float32)
  np.testing.assert_allclose(z.astype(jnp.float32), ref, atol=2e-2)
