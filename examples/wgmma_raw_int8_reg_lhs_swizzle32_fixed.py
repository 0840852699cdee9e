"""A raw Mosaic GPU int8 GEMM with A in registers (jax-test style): the B tiles are staged
with a 64-byte swizzle, the smallest jax takes for an int8 A in registers."""

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
SWIZZLE = 64
NK_TILE = SWIZZLE // jnp.dtype(jnp.int8).itemsize
K_STEPS = 4
K = NK_TILE * K_STEPS
TILING = (NK_TILE, NK_TILE)  # square B tiles, as in jax's _test_wgmma_reg_lhs


def kernel(ctx, lhs, rhs, out, smem):
  rhs_smem, barrier = smem
  # (N, K) in GMEM -> (K, N) tiles of (n, k) in SMEM: K-major, as an int8 B must be.
  ctx.async_copy(
      src_ref=rhs, dst_ref=rhs_smem, swizzle=SWIZZLE, barrier=barrier,
      gmem_transform=(mgpu.TileTransform(TILING), mgpu.TransposeTransform((1, 0, 2, 3))),
  )
  barrier.wait()
  acc = mgpu.WGMMAAccumulator.zero(m=M, n=N, dtype=utils.dtype_to_ir_type(jnp.int32), is_signed=True)
  lhs_regs = fa.FragmentedArray.load_untiled(lhs, layout=fa.WGMMA_LAYOUT_8BIT, optimized=False, is_signed=True)
  rhs_smem = memref_transpose(rhs_smem, (0, 1, 3, 2))
  acc = mgpu.wgmma(acc, lhs_regs, rhs_smem, swizzle=SWIZZLE)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out, optimized=False)


def build():
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
        jax.ShapeDtypeStruct((M, N), jnp.int32),
        (
            # (K // NK_TILE, N // NK_TILE) square tiles (the tiles of B.T, so tile_shape of (K, N))
            jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), TILING), jnp.int8),
            mgpu.Barrier(arrival_count=1),  # one TMA copy
        ),
    )


def main():
  rng = np.random.default_rng(0)
  a = rng.integers(-128, 128, (M, K)).astype(np.int8)
  b = rng.integers(-128, 128, (N, K)).astype(np.int8)  # stored (N, K): B is K-major
  out = np.asarray(build()(a, b))
  np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32).T)
  print("wgmma int8 tile, A in registers: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
