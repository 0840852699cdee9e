"""Co-occurrence counts of two uint8 feature maps on Blackwell (raw Mosaic GPU).

Bug: tcgen05 always reads 8-bit integer operands as signed (`kind::i8` with S8), so every
value >= 128 counts as negative and the counts are wrong, with no error (MMA705)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 128
SWIZZLE = 128
TILING = (8, SWIZZLE)  # 8-bit elements: 128 bytes per row
ACC_DTYPE = jnp.int32


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
    tcgen05.mma(acc, lhs_smem, rhs_smem, a_swizzle=SWIZZLE, b_swizzle=SWIZZLE, accumulate=False)
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load(is_signed=True).store_untiled(out, optimized=False)


def build(x, y):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), x.dtype),
      jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), TILING), y.dtype),
      mgpu.Barrier(1, num_barriers=2),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), ACC_DTYPE),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), ACC_DTYPE)
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
  x = jnp.asarray(rng.integers(0, 256, (M, K)), jnp.uint8)  # full byte range
  y = jnp.asarray(rng.integers(0, 256, (K, N)), jnp.uint8)
  matmul = build(x, y)  # every check of tcgen05.mma() runs while the module is built
  if tcgen05_device() is None:
    lower_only(matmul, x, y)
    return
  out = np.asarray(matmul(x, y))
  np.testing.assert_array_equal(out, np.asarray(x, np.int64) @ np.asarray(y, np.int64))
  print("co-occurrence counts: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
