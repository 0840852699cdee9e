"""A raw Mosaic GPU float32 (tf32) GEMM: A is read by wgmma from SMEM, the only place a
float32 A can come from (registers take f16, bf16, int8 and fp8 only)."""

import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax.experimental.mosaic.gpu.utils import memref_transpose
from jaxlib.mlir.dialects import nvvm

M, N = 64, 128
SWIZZLE = 128
NK_TILE = SWIZZLE // jnp.dtype(jnp.float32).itemsize
K_STEPS = 2
K = NK_TILE * K_STEPS


def kernel(ctx, lhs, rhs, out, smem):
  lhs_smem, rhs_smem = smem
  ctx.async_copy(src_ref=lhs, dst_ref=lhs_smem, swizzle=SWIZZLE,
                 gmem_transform=mgpu.TileTransform((8, NK_TILE)))
  # (N, K) in GMEM -> (K, N) tiles of (n, k) in SMEM: K-major, as a 32-bit B must be.
  ctx.async_copy(
      src_ref=rhs, dst_ref=rhs_smem, swizzle=SWIZZLE,
      gmem_transform=(mgpu.TileTransform((8, NK_TILE)), mgpu.TransposeTransform((1, 0, 2, 3))),
  )
  ctx.await_async_copy(0)
  acc = mgpu.WGMMAAccumulator.zero(M, N)
  rhs_smem = memref_transpose(rhs_smem, (0, 1, 3, 2))
  acc = mgpu.wgmma(acc, lhs_smem, rhs_smem, swizzle=SWIZZLE)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out, optimized=False)


matmul = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.float32), jax.ShapeDtypeStruct((N, K), jnp.float32)),
    jax.ShapeDtypeStruct((M, N), jnp.float32),
    (
        jax.ShapeDtypeStruct((M // 8, K_STEPS, 8, NK_TILE), jnp.float32),
        jax.ShapeDtypeStruct((K_STEPS, N // 8, 8, NK_TILE), jnp.float32),
    ),
)
