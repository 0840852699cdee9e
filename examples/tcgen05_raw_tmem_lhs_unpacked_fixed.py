"""bfloat16 activations kept in tensor memory for a Blackwell GEMM tile (raw Mosaic GPU): A is
stored to TMEM once and read from there by `tcgen05.mma`, two bfloat16 per 32-bit TMEM cell."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import tcgen05, utils
from jaxlib.mlir import ir

M, N, K = 128, 128, 64
SWIZZLE = 128
TILING = (8, SWIZZLE // 2)  # 16-bit elements: 128 bytes per row
PACKING = 2  # bfloat16 elements per 32-bit TMEM cell: how tcgen05.mma reads A from TMEM


def kernel(ctx, lhs, rhs, out, scratch):
  rhs_smem, barrier, mma_barrier, acc, lhs_tmem = scratch
  ctx.async_copy(
      src_ref=rhs,
      dst_ref=rhs_smem,
      swizzle=SWIZZLE,
      gmem_transform=mgpu.TileTransform(TILING),
      barrier=barrier,
  )
  barrier.wait()
  # The activations go to TMEM through registers, in the tcgen05 register layout.
  lhs_tmem.store(fa.FragmentedArray.load_untiled(lhs, layout=tcgen05.LAYOUT, optimized=False))
  tcgen05.commit_tmem()
  with mgpu.single_thread():
    tcgen05.mma(
        acc,
        lhs_tmem,
        utils.memref_transpose(rhs_smem, (1, 0, 3, 2)),  # weights stored (N, K)
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build(x, w):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), w.dtype),
      mgpu.Barrier(1),
      mgpu.Barrier(1),
      mgpu.TMEM((M, N), jnp.float32),
      mgpu.TMEM((M, K), x.dtype, packing=PACKING),
  ]
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, w), out_shape, scratch)


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
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), jnp.bfloat16)  # activations
  w = jnp.asarray(rng.uniform(-1, 1, (N, K)), jnp.bfloat16)  # weights, stored (N, K)
  matmul = build(x, w)  # every check of tcgen05.mma() runs while the module is built
  if tcgen05_device() is None:
    lower_only(matmul, x, w)
    return
  out = np.asarray(matmul(x, w))
  ref = np.asarray(x, np.float32) @ np.asarray(w, np.float32).T
  np.testing.assert_allclose(out, ref, atol=2e-5, rtol=1e-5)
  print("bf16 GEMM tile with A in TMEM: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
