"""Lane-semantics warp MMA for uint8 counts and for bf16 via 16-bit layouts."""

import functools

import jax
from jax.experimental.pallas.mosaic_gpu import CompilerParams
from jax.experimental.pallas.mosaic_gpu import kernel as mgpu_kernel
from jax.experimental.pallas.mosaic_gpu import Layout
from jax.experimental.pallas.mosaic_gpu import layout_cast
from jax.experimental.pallas.mosaic_gpu import load
from jax.experimental.pallas.mosaic_gpu import LoweringSemantics
from jax.experimental.pallas.mosaic_gpu import mma
import jax.numpy as jnp
import numpy as np

# Lane semantics keeps the operands' own signedness (u8.u8 in the PTX).
_LANE = CompilerParams(lowering_semantics=LoweringSemantics.Lane)

# MMA register layouts only depend on the element bit width, so the float16
# layouts are shared by every 16-bit operand type.
_LHS16 = Layout.MMA_LHS(jnp.float16)
_RHS16 = Layout.MMA_RHS(jnp.float16)


def u8_matmul(a: np.ndarray, b_t: np.ndarray) -> jax.Array:
  assert a.dtype == np.uint8 and b_t.dtype == np.uint8
  m, k = a.shape
  n, _ = b_t.shape
  dtype = jnp.uint8

  @functools.partial(
      mgpu_kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.int32),
      compiler_params=_LANE,
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = layout_cast(jnp.zeros((m, n), jnp.int32), Layout.MMA_ACC(dtype))
    x = load(a_ref, layout=Layout.MMA_LHS(dtype), optimized=False)
    y = load(b_ref.T, layout=Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = mma(acc, x, y)

  return kernel(a, b_t)


def bf16_matmul(a: jax.Array, b_t: jax.Array) -> jax.Array:
  m, k = a.shape
  n, _ = b_t.shape

  @functools.partial(
      mgpu_kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      compiler_params=_LANE,
  )
  def kernel(a_ref, b_ref, o_ref):
    acc = layout_cast(
        jnp.zeros((m, n), jnp.float32), Layout.MMA_ACC(jnp.float32)
    )
    x = load(a_ref, layout=_LHS16, optimized=False)
    y = load(b_ref.T, layout=_RHS16, optimized=False)
    o_ref[...] = mma(acc, x, y)

  return kernel(a.astype(jnp.bfloat16), b_t.astype(jnp.bfloat16))


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  a8 = rng.integers(0, 256, (128, 128)).astype(np.uint8)
  b8 = rng.integers(0, 256, (64, 128)).astype(np.uint8)
  np.testing.assert_array_equal(
      u8_matmul(a8, b8), a8.astype(np.int32) @ b8.T.astype(np.int32)
  )
  a16 = jnp.ones((128, 64), jnp.bfloat16)
  b16 = jnp.ones((32, 64), jnp.bfloat16)
  np.testing.assert_allclose(bf16_matmul(a16, b16), 64.0)
