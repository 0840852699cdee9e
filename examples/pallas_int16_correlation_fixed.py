"""Cross-correlation of 16-bit PCM audio frames against a filter bank, in Pallas.

frames (M, K) are int16 PCM windows and filters (N, K) int16 filter taps; the
kernel computes scores = frames @ filters.T with the warp-level `plgpu.mma`
and exact int32 accumulation. Samples are pre-shifted to 7 significant bits so
no int32 sum can overflow.

Run on an sm_80+ GPU:  python pallas_int16_correlation.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 256  # frames, filters, taps per frame
# mma.sync multiplies 8- or 4-bit integers only; the shifted samples fit int8.
SAMPLE_DTYPE = jnp.int8
SHIFT = 9  # keep the top 7 bits of each 16-bit sample


def correlate_body(frames_ref, filters_ref, scores_ref):
  acc = plgpu.layout_cast(
      jnp.zeros((M, N), jnp.int32), plgpu.Layout.MMA_ACC(SAMPLE_DTYPE)
  )
  frames = plgpu.load(frames_ref, layout=plgpu.Layout.MMA_LHS(SAMPLE_DTYPE),
                      optimized=False)
  filters = plgpu.load(filters_ref.T,
                       layout=plgpu.Layout.MMA_RHS(SAMPLE_DTYPE),
                       optimized=False)
  scores_ref[...] = plgpu.mma(acc, frames, filters)


correlate = plgpu.kernel(
    correlate_body, out_type=jax.ShapeDtypeStruct((M, N), jnp.int32)
)


def main():
  rng = np.random.default_rng(0)
  pcm = rng.integers(-32768, 32768, (M, K))
  taps = rng.integers(-32768, 32768, (N, K))
  frames = jnp.asarray(pcm >> SHIFT, SAMPLE_DTYPE)
  filters = jnp.asarray(taps >> SHIFT, SAMPLE_DTYPE)
  scores = np.asarray(correlate(frames, filters))
  ref = (pcm >> SHIFT) @ (taps >> SHIFT).T
  np.testing.assert_array_equal(scores, ref)
  print("correlation: OK, best filter per frame:", scores.argmax(1)[:8])


if __name__ == "__main__":
  main()
