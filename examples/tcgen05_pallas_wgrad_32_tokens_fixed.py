"""The weight gradient of a linear layer on Blackwell in Pallas, dW = X^T @ dY over a block of
32 tokens: X (tokens, d_in) is read M-major through `plgpu.transpose_ref`, dY (tokens, d_out)
N-major as stored. K is the token block, so both are staged with 64-byte swizzles: a 64-byte
row holds 32 bf16 values, exactly one tcgen05 group of K."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

TOKENS, D_IN, D_OUT = 32, 128, 128
DTYPE = jnp.bfloat16
SWIZZLE = 64  # one swizzle row (32 bf16) per K group of 32 tokens


def weight_grad(x, dy):
  transforms = (
      plgpu.TilingTransform((8, SWIZZLE // jnp.dtype(DTYPE).itemsize)),
      plgpu.SwizzleTransform(SWIZZLE),
  )

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((D_IN, D_OUT), jnp.float32),
      scratch_types=[
          plgpu.SMEM((TOKENS, D_IN), DTYPE, transforms=transforms),
          plgpu.SMEM((TOKENS, D_OUT), DTYPE, transforms=transforms),
          plgpu.TMEM((D_IN, D_OUT), jnp.float32),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(x_gmem, dy_gmem, dw_gmem, x_smem, dy_smem, dw_tmem, tma_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(dy_gmem, dy_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    # (d_in, tokens) @ (tokens, d_out): A is X^T, K is the token axis.
    plgpu.tcgen05_mma(dw_tmem, plgpu.transpose_ref(x_smem, (1, 0)), dy_smem, mma_barrier,
                      accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    dw_gmem[...] = plgpu.async_load_tmem(dw_tmem)

  return kernel(x, dy)


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
  x = jnp.asarray(rng.uniform(-1, 1, (TOKENS, D_IN)), DTYPE)
  dy = jnp.asarray(rng.uniform(-1, 1, (TOKENS, D_OUT)), DTYPE)
  if tcgen05_device() is None:
    lower_only(weight_grad, x, dy)
    return
  out = np.asarray(weight_grad(x, dy))
  ref = np.asarray(x, np.float32).T @ np.asarray(dy, np.float32)
  # bf16 products are exact in f32; only the summation order differs.
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
  print("weight gradient tile: OK, max |dW| =", np.abs(out).max())


if __name__ == "__main__":
  main()
