"""Raw Mosaic GPU attention-style tile: the probabilities are cast to the
values' bfloat16, as wgmma needs A and B of one element type."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import nvvm

M, N, K = 64, 64, 64
P_DTYPE = jnp.bfloat16
V_DTYPE = jnp.bfloat16
TILING = (8, 64)  # 16-bit elements: 128 bytes per tile row


def kernel(ctx, p_gmem, v_gmem, out_gmem, smem):
  p_smem, v_smem, barrier = smem  # both operands tiled (8, 64) in SMEM
  tile = mgpu.TileTransform(TILING)
  ctx.async_copy(src_ref=p_gmem, dst_ref=p_smem, swizzle=128, gmem_transform=tile, barrier=barrier)
  ctx.async_copy(src_ref=v_gmem, dst_ref=v_smem, swizzle=128, gmem_transform=tile, barrier=barrier)
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N)
  acc = mgpu.wgmma(acc, p_smem, v_smem)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out_gmem, optimized=False)


def build():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), P_DTYPE), jax.ShapeDtypeStruct((K, N), V_DTYPE)),
        jax.ShapeDtypeStruct((M, N), jnp.float32),
        (
            jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), P_DTYPE),
            jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), TILING), V_DTYPE),
            mgpu.Barrier(arrival_count=2),  # one arrival per TMA copy
        ),
    )


def main():
  rng = np.random.default_rng(0)
  scores = rng.uniform(-1, 1, (M, K))
  probs = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)  # softmax rows
  p = jnp.asarray(probs, P_DTYPE)
  v = jnp.asarray(rng.uniform(-1, 1, (K, N)), V_DTYPE)
  out = np.asarray(build()(p, v))
  # Products of two 16-bit floats are exact in f32: only the f32 summation order differs.
  ref = np.asarray(p, np.float32) @ np.asarray(v, np.float32)
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
  print("wgmma attention tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
