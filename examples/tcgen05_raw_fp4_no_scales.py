"""An FP4 (float4_e2m1fn) x FP4 Blackwell GEMM in raw Mosaic GPU, packed weights and activations.

Bug: no block scales are passed. Mosaic GPU emits FP4 only as the block-scaled `kind::mxf4`:
jax raises `MMA with element type f4E2M1FN only supports block scaling` (MMA708)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 512
SWIZZLE = 128
TILING = (8, 2 * SWIZZLE)  # 4-bit elements: 256 per 128-byte row


def kernel(ctx, lhs, rhs, out, scratch):
  lhs_smem, rhs_smem, barriers, mma_barrier, acc = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(
        src_ref=src,
        dst_ref=dst,
        swizzle=SWIZZLE,
        gmem_transform=mgpu.TileTransform(TILING),
        barrier=barrier,
    )
    barrier.wait()
  with mgpu.single_thread():
    tcgen05.mma(
        acc,
        lhs_smem,
        mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build(x, y):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), x.dtype),
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), y.dtype),
      mgpu.Barrier(1, num_barriers=2),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), jnp.float32),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y), out_shape, scratch)


def tcgen05_device():
  """The compute capability ("10.0") if the default device has tcgen05 (sm_100-class), else None."""
  cc = getattr(jax.devices()[0], "compute_capability", None)
  return cc if cc is not None and cc.split(".")[0] == "10" else None


def lower_only(fn, *args):
  """Trace and lower for CUDA without running: Mosaic GPU's Python-level checks run here."""
  jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))
  device = jax.devices()[0]
  cc = getattr(device, "compute_capability", None)
  print(f"tcgen05 needs sm_100a; lowered only on {f'sm {cc}' if cc else device.platform}")


def main():
  rng = np.random.default_rng(0)
  # float4_e2m1fn holds 0, +-0.5, +-1, +-1.5, +-2, +-3, +-4, +-6: uniform(-6, 6) rounds onto them.
  x = jnp.asarray(rng.uniform(-6, 6, (M, K)), jnp.float4_e2m1fn)
  y = jnp.asarray(rng.uniform(-6, 6, (N, K)), jnp.float4_e2m1fn)  # weights stored (N, K)
  matmul = build(x, y)  # every check of tcgen05.mma() runs while the module is built
  if tcgen05_device() is None:
    lower_only(matmul, x, y)
    return
  out = np.asarray(matmul(x, y))
  ref = np.asarray(x, np.float64) @ np.asarray(y, np.float64).T
  # e2m1 products and their sums (multiples of 0.25, below 2**15) are exact in f32.
  np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
  print("fp4 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
