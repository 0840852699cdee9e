"""An int8 GEMM tile whose N was trimmed to 120 columns to fit a projection width.

Bug: an int32-accumulating (kind::i8) 1-CTA tcgen05 MMA needs N to be a multiple of 16 (MMA703)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 120, 128
ACC_DTYPE = jnp.int32
OUT_DTYPE = jnp.int32


def matmul(a, b):
  swizzle = 128
  transforms = (
      plgpu.TilingTransform((8, swizzle // jnp.dtype(a.dtype).itemsize)),
      plgpu.SwizzleTransform(swizzle),
  )

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((TILE_M, TILE_N), OUT_DTYPE),
      scratch_types=[
          plgpu.SMEM((TILE_M, TILE_K), a.dtype, transforms=transforms),
          plgpu.SMEM((TILE_N, TILE_K), b.dtype, transforms=transforms),  # K-major B
          plgpu.TMEM((TILE_M, TILE_N), ACC_DTYPE, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
          plgpu.SMEM((TILE_M, TILE_N), OUT_DTYPE),
      ],
  )
  def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier, out_smem):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem.T, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    out_smem[...] = plgpu.async_load_tmem(acc_tmem).astype(OUT_DTYPE)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(out_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(a, b)


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
  out_features = 120  # the projection's real width; the tile computes TILE_N columns
  rng = np.random.default_rng(0)
  x = rng.integers(-128, 128, (TILE_M, TILE_K)).astype(np.int8)
  w = rng.integers(-128, 128, (out_features, TILE_K)).astype(np.int8)  # weights stored (N, K)
  w_tile = np.zeros((TILE_N, TILE_K), np.int8)
  w_tile[:out_features] = w  # zero weights for any padding columns
  args = (jnp.asarray(x), jnp.asarray(w_tile))
  if tcgen05_device() is None:
    lower_only(matmul, *args)
    return
  out = np.asarray(matmul(*args))[:, :out_features]
  np.testing.assert_array_equal(out, x.astype(np.int32) @ w.astype(np.int32).T)
  print("int8 projection tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
