"""Attention scores for a decode step: 64 query rows against a block of 128 keys, on Blackwell
in Pallas, the queries read from SMEM by the MMA (A in TMEM needs a 128-row tile)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

QUERIES, KEYS, HEAD_DIM = 64, 128, 64  # M, N, K of the score tile
SWIZZLE = 128
TRANSFORMS = (plgpu.TilingTransform((8, SWIZZLE // 2)), plgpu.SwizzleTransform(SWIZZLE))  # bf16


def scores(q, k):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((QUERIES, KEYS), jnp.float32),
      scratch_types=[
          plgpu.SMEM((QUERIES, HEAD_DIM), q.dtype, transforms=TRANSFORMS),
          plgpu.SMEM((KEYS, HEAD_DIM), k.dtype, transforms=TRANSFORMS),
          plgpu.TMEM((QUERIES, KEYS), jnp.float32),
          plgpu.Barrier(num_arrivals=2),
          plgpu.Barrier(orders_tensor_core=True),
          plgpu.SMEM((QUERIES, KEYS), jnp.float32),
      ],
  )
  def kernel(q_gmem, k_gmem, out_gmem, q_smem, k_smem, s_tmem, tma_barrier, mma_barrier, out_smem):
    plgpu.copy_gmem_to_smem(q_gmem, q_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(k_gmem, k_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(s_tmem, q_smem, plgpu.transpose_ref(k_smem, (1, 0)), mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    out_smem[...] = plgpu.async_load_tmem(s_tmem)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(out_smem, out_gmem)
    plgpu.wait_smem_to_gmem(0)

  return kernel(q, k)


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
  q = jnp.asarray(rng.uniform(-1, 1, (QUERIES, HEAD_DIM)), jnp.bfloat16)
  k = jnp.asarray(rng.uniform(-1, 1, (KEYS, HEAD_DIM)), jnp.bfloat16)
  if tcgen05_device() is None:
    lower_only(scores, q, k)
    return
  out = np.asarray(scores(q, k))
  ref = np.asarray(q, np.float32) @ np.asarray(k, np.float32).T
  np.testing.assert_allclose(out, ref, atol=2e-5, rtol=1e-5)
  print("decode scores (64 queries): OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
