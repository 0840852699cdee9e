"""A Blackwell linear layer in Pallas: bf16 activations times a weight matrix loaded from a
float16 checkpoint, converted to bfloat16 before the kernel."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 128, 256, 64
OUT_DTYPE = jnp.bfloat16


def linear(x, w):
  swizzle = 128
  transforms = (
      plgpu.TilingTransform((8, swizzle // jnp.dtype(x.dtype).itemsize)),
      plgpu.SwizzleTransform(swizzle),
  )

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((TILE_M, TILE_N), OUT_DTYPE),
      scratch_types=[
          plgpu.SMEM((TILE_M, TILE_K), x.dtype, transforms=transforms),
          plgpu.SMEM((TILE_K, TILE_N), w.dtype, transforms=transforms),
          plgpu.TMEM((TILE_M, TILE_N), jnp.float32, packed=False),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
          plgpu.SMEM((TILE_M, TILE_N), OUT_DTYPE),
      ],
  )
  def kernel(x_gmem, w_gmem, out_gmem, x_smem, w_smem, acc_tmem, tma_barrier, mma_barrier, out_smem):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(w_gmem, w_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, x_smem, w_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    out_smem[...] = plgpu.async_load_tmem(acc_tmem).astype(OUT_DTYPE)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(out_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(x, w)



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
  # Weights as the checkpoint stores them: float16, N(0, 1/K) as after a usual init.
  checkpoint = {"w": (rng.standard_normal((TILE_K, TILE_N)) / np.sqrt(TILE_K)).astype(np.float16)}
  x = jnp.asarray(rng.standard_normal((TILE_M, TILE_K)), jnp.bfloat16)  # activations
  w = jnp.asarray(checkpoint["w"]).astype(jnp.bfloat16)
  if tcgen05_device() is None:
    lower_only(linear, x, w)
    return
  out = np.asarray(linear(x, w), np.float64)
  ref = np.asarray(x, np.float64) @ np.asarray(w, np.float64)
  # f32 accumulation, then one rounding to bfloat16 (8-bit mantissa, relative error <= 2**-9).
  np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-2)
  print("bf16 linear tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
