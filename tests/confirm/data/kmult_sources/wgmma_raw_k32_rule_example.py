"""MMA612's Mosaic GPU rule example (rules/mma6xx.toml): K = 32 bf16 with the default swizzle=128."""

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jaxlib.mlir import ir

M, N, K = 64, 128, 32
TILING = (8, 64)  # 128-byte rows of bf16


def kernel(ctx, h, b, out, smem):
  b_smem, barrier = smem
  ctx.async_copy(src_ref=b, dst_ref=b_smem, swizzle=128, barrier=barrier,
                 gmem_transform=mgpu.TileTransform(TILING))
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N)
  h_regs = fa.FragmentedArray.load_untiled(h, layout=fa.WGMMA_LAYOUT, optimized=False)
  acc = mgpu.wgmma(acc, h_regs, b_smem)
  acc.value.store_untiled(out, optimized=False)


with mlir.make_ir_context(), ir.Location.unknown():
  mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), jnp.bfloat16), jax.ShapeDtypeStruct((K, N), jnp.bfloat16)),
      jax.ShapeDtypeStruct((M, N), jnp.float32),
      (jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), TILING), jnp.bfloat16), mgpu.Barrier(1)),
  )
