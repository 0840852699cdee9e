"""Weighted co-occurrence counts of uint8 feature histograms in Pallas.

counts (A, B) int32 = hist_a (A, BINS) @ hist_b (B, BINS).T, where every row
is a 128-bin histogram saturated to 0..255 counts. One warp-level `plgpu.mma`
tile computes the whole (A, B) block with exact int32 sums.

Run on an sm_80+ GPU:  python pallas_u8_cooccurrence.py
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

A, B, BINS = 128, 64, 128
DTYPE = jnp.uint8


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((A, B), jnp.int32),
    # Since jax 0.11 the default is Warpgroup, which computes uint8 as int8.
    compiler_params=plgpu.CompilerParams(
        lowering_semantics=plgpu.LoweringSemantics.Lane
    ),
)
def cooccurrence(ha_ref, hb_ref, o_ref):
  acc = plgpu.layout_cast(
      jnp.zeros((A, B), jnp.int32), plgpu.Layout.MMA_ACC(DTYPE)
  )
  ha = plgpu.load(ha_ref, layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False)
  hb = plgpu.load(hb_ref.T, layout=plgpu.Layout.MMA_RHS(DTYPE),
                  optimized=False)
  o_ref[...] = plgpu.mma(acc, ha, hb)


def histograms(rng, n):
  """n random 128-bin histograms of skewed data, saturated to uint8."""
  samples = rng.zipf(1.3, (n, 4096)) % BINS
  counts = np.stack([np.bincount(s, minlength=BINS) for s in samples])
  return np.minimum(counts, 255)


def main():
  rng = np.random.default_rng(0)
  hist_a = jnp.asarray(histograms(rng, A), DTYPE)
  hist_b = jnp.asarray(histograms(rng, B), DTYPE)
  counts = np.asarray(cooccurrence(hist_a, hist_b))
  ref = np.asarray(hist_a, np.int64) @ np.asarray(hist_b, np.int64).T
  np.testing.assert_array_equal(counts, ref)
  print("co-occurrence: OK, max count", counts.max())


if __name__ == "__main__":
  main()
