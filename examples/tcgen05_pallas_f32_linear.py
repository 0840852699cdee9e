"""A float32 linear layer on Blackwell, hoping for TF32 tensor cores.

Bug: float32 operands pass every tcgen05 check, then Mosaic GPU fails with
`Unsupported input element type: tf32` (MMA702)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 128, 32
ACC_DTYPE = jnp.float32
OUT_DTYPE = jnp.float32


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
  x = jnp.asarray(rng.uniform(-1, 1, (TILE_M, TILE_K)), jnp.float32)
  w = jnp.asarray(rng.uniform(-1, 1, (TILE_K, TILE_N)), jnp.float32)
  args = (x, w)  # float32 operands, as in the model
  # TF32 would keep 11 significant bits of each operand; the products are summed in f32.
  rtol, atol = 5e-3, 5e-3
  if tcgen05_device() is None:
    lower_only(matmul, *args)
    return
  out = np.asarray(matmul(*args))
  ref = np.asarray(x, np.float64) @ np.asarray(w, np.float64)
  np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
  print("linear layer tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
