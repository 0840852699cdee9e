"""Smoke-test 8-bit warp MMA for both signed and unsigned inputs.

Uses whatever lowering semantics plgpu.kernel picks by default.
"""

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np

m, n, k = 128, 128, 64


def build(dtype):
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((m, n), jnp.int32), plgpu.Layout.MMA_ACC(dtype)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  return jax.jit(
      plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), jnp.int32))
  )


def main():
  rng = np.random.default_rng(0)
  for dtype in (jnp.int8, jnp.uint8):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, int(info.max) + 1, (m, k)).astype(dtype)
    b = rng.integers(info.min, int(info.max) + 1, (n, k)).astype(dtype)
    out = build(dtype)(a, b)
    ref = a.astype(np.int32) @ b.T.astype(np.int32)
    print(jnp.dtype(dtype).name, "max err", int(np.abs(np.asarray(out) - ref).max()))


if __name__ == "__main__":
  main()
