"""matlib.matmul against NumPy, for the dtypes matlib ships. Run on an sm_80+ GPU:

    pytest tests/ops_test.py
"""

import jax.numpy as jnp
import numpy as np

import matlib


def _operands(dtype):
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.integers(-4, 5, (matlib.M, matlib.K)), dtype=dtype)
  b = jnp.asarray(rng.integers(-4, 5, (matlib.N, matlib.K)), dtype=dtype)
  return a, b


def _reference(a, b):
  return np.asarray(a, np.float64) @ np.asarray(b, np.float64).T


def test_bf16():
  a, b = _operands(jnp.bfloat16)
  out = matlib.matmul(a, b)
  np.testing.assert_allclose(np.asarray(out, np.float64), _reference(a, b))


def test_int8():
  # int8 weights, as the quantized models call it. The accumulator is left at its default.
  a, b = _operands(jnp.int8)
  out = matlib.matmul(a, b)
  np.testing.assert_array_equal(np.asarray(out, np.int64), _reference(a, b).astype(np.int64))
