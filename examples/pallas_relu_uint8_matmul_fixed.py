"""Quantized MLP down-projection in Pallas Mosaic GPU: relu(h) @ w.T in int32.

The hidden activations are post-ReLU, hence non-negative, so they are quantized
with a per-tensor scale to ACT_DTYPE without a zero point; the weights are
symmetric int8. `plgpu.mma` multiplies one (M, N) tile on the tensor cores and
the host applies both scales.

Run on an sm_80+ GPU:  python pallas_relu_uint8_matmul.py
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 256
# plgpu.mma needs one operand dtype: keep the activations signed, in 0..127.
ACT_DTYPE = jnp.int8
W_DTYPE = jnp.int8


def quantize(v, dtype, lo):
  """Integer levels of v in [lo, max of dtype] and the scale mapping them back."""
  hi = np.iinfo(dtype).max
  scale = np.abs(v).max() / hi
  return np.clip(np.round(v / scale), lo, hi), scale


@functools.partial(
    plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.int32)
)
def qmatmul(h_ref, w_ref, o_ref):
  acc = plgpu.layout_cast(
      jnp.zeros((M, N), jnp.int32), plgpu.Layout.MMA_ACC(W_DTYPE)
  )
  h = plgpu.load(h_ref, layout=plgpu.Layout.MMA_LHS(ACT_DTYPE), optimized=False)
  w = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(W_DTYPE), optimized=False)
  o_ref[...] = plgpu.mma(acc, h, w)


def main():
  rng = np.random.default_rng(0)
  h = np.maximum(rng.standard_normal((M, K)), 0.0)
  w = rng.standard_normal((N, K))
  h_levels, h_scale = quantize(h, ACT_DTYPE, lo=0)
  w_levels, w_scale = quantize(w, W_DTYPE, lo=-127)
  h_q = jnp.asarray(h_levels, ACT_DTYPE)
  w_q = jnp.asarray(w_levels, W_DTYPE)
  out = np.asarray(qmatmul(h_q, w_q))
  np.testing.assert_array_equal(
      out, h_levels.astype(np.int32) @ w_levels.astype(np.int32).T
  )
  err = np.abs(out * h_scale * w_scale - h @ w.T).max()
  print(f"quantized down-projection: OK (max abs error vs f64: {err:.3f})")


if __name__ == "__main__":
  main()
