"""A Blackwell bf16 GEMM tile that accumulates in float16 to halve its TMEM columns.

Bug: tcgen05 takes only a float32 accumulator for bfloat16 operands (MMA701)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 256, 64
ACC_DTYPE = jnp.float16  # saves TMEM columns, but bf16 needs f32
OUT_DTYPE = jnp.bfloat16


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
          plgpu.SMEM((TILE_K, TILE_N), b.dtype, transforms=transforms),
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
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
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
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (TILE_M, TILE_K)), jnp.bfloat16)
  y = jnp.asarray(rng.uniform(-1, 1, (TILE_K, TILE_N)), jnp.bfloat16)
  if tcgen05_device() is None:
    lower_only(matmul, x, y)
    return
  out = np.asarray(matmul(x, y), np.float32)
  ref = np.asarray(x, np.float32) @ np.asarray(y, np.float32)
  # The f32 sums are rounded once to bf16 (8 significant bits) on the way out.
  np.testing.assert_allclose(out, ref, rtol=2 ** -7, atol=1e-2)
  print("bf16 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
