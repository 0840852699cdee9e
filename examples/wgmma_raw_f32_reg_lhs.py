"""A raw Mosaic GPU float32 (tf32) GEMM that keeps the activations in registers, as the
bf16 version of the kernel did: wgmma reads A from registers only for 16- and 8-bit types
(f16, bf16, int8, fp8). A float32 A has to come from SMEM."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import memref_transpose
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import nvvm

M, N = 64, 128
SWIZZLE = 128
NK_TILE = SWIZZLE // jnp.dtype(jnp.float32).itemsize
K_STEPS = 2
K = NK_TILE * K_STEPS
TILING = (8, NK_TILE)  # 32-bit elements: 128 bytes per tile row


def kernel(ctx, lhs, rhs, out, smem):
  lhs_smem, rhs_smem, barrier = smem
  ctx.async_copy(src_ref=lhs, dst_ref=lhs_smem, swizzle=SWIZZLE, barrier=barrier,
                 gmem_transform=mgpu.TileTransform(TILING))
  # (N, K) in GMEM -> (K, N) tiles of (n, k) in SMEM: K-major, as a 32-bit B must be.
  ctx.async_copy(
      src_ref=rhs, dst_ref=rhs_smem, swizzle=SWIZZLE, barrier=barrier,
      gmem_transform=(mgpu.TileTransform(TILING), mgpu.TransposeTransform((1, 0, 2, 3))),
  )
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N)
  lhs_regs = fa.FragmentedArray.load_untiled(lhs, layout=fa.WGMMA_LAYOUT, optimized=False)
  rhs_smem = memref_transpose(rhs_smem, (0, 1, 3, 2))
  acc = mgpu.wgmma(acc, lhs_regs, rhs_smem, swizzle=SWIZZLE)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out, optimized=False)


def build():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.float32), jax.ShapeDtypeStruct((N, K), jnp.float32)),
        jax.ShapeDtypeStruct((M, N), jnp.float32),
        (
            jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.float32),
            # B's (8, NK_TILE) tiles with the two tile-grid dims swapped by the TransposeTransform
            jax.ShapeDtypeStruct((K_STEPS, N // 8, 8, NK_TILE), jnp.float32),
            mgpu.Barrier(arrival_count=2),  # one arrival per TMA copy
        ),
    )


def main():
  rng = np.random.default_rng(0)
  # wgmma reads float32 as tf32: round the data to tf32 here so that the products are exact.
  a = np.asarray(jax.lax.reduce_precision(rng.uniform(-1, 1, (M, K)).astype(np.float32), 8, 10))
  b = np.asarray(jax.lax.reduce_precision(rng.uniform(-1, 1, (N, K)).astype(np.float32), 8, 10))
  out = np.asarray(build()(a, b))  # b stored (N, K): B is K-major
  ref = a @ b.T
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)  # only the f32 summation order differs
  print("wgmma tf32 tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
