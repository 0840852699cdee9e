"""An MXFP8 (block-scaled e4m3) expert router on Blackwell in Pallas, for jax 0.10: 128 tokens
times 48 experts, computed as N = 64 (jax 0.10 takes a block-scaled MMA only with N a multiple
of 32): the 16 padding experts have zero weights and are dropped. B's scales are padded to
128 rows (tcgen05 reads them from 128 TMEM lanes)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 256
EXPERTS = 48  # the router's real width
SCALE_ROWS = 128  # B's scales are padded to TMEM's 128 lanes
BLOCK = 32  # one scale per 32 elements of K (MXFP8)
SCALE_DTYPE = jnp.float8_e8m0fnu  # MXFP8: power-of-two scales


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 reads from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def scaled_matmul(x, y, x_scale, y_scale):
  swizzle = 128
  transforms = (plgpu.TilingTransform((8, swizzle)), plgpu.SwizzleTransform(swizzle))

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      scratch_types=[
          plgpu.SMEM((M, K), x.dtype, transforms=transforms),
          plgpu.SMEM((N, K), y.dtype, transforms=transforms),
          plgpu.SMEM(scale_tiles(M), SCALE_DTYPE),
          plgpu.SMEM(scale_tiles(SCALE_ROWS), SCALE_DTYPE),
          plgpu.TMEM((M, N), jnp.float32),
          plgpu.TMEM((M, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((SCALE_ROWS, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.Barrier(num_arrivals=4),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(x_gmem, y_gmem, xs_gmem, ys_gmem, out_gmem, x_smem, y_smem, xs_smem, ys_smem,
             acc_tmem, xs_tmem, ys_tmem, tma_barrier, mma_barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(y_gmem, y_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(xs_gmem, xs_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(ys_gmem, ys_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.async_copy_scales_to_tmem(xs_smem, xs_tmem)
    plgpu.async_copy_scales_to_tmem(ys_smem, ys_tmem)
    plgpu.tcgen05_mma(
        acc_tmem,
        x_smem,
        plgpu.transpose_ref(y_smem, (1, 0)),
        a_scale=xs_tmem,
        b_scale=ys_tmem,
        accumulate=False,
    )
    plgpu.tcgen05_commit_arrive(mma_barrier)
    plgpu.barrier_wait(mma_barrier)
    out_gmem[...] = plgpu.async_load_tmem(acc_tmem)

  return kernel(x, y, x_scale, y_scale)


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


def format_scales(scales):
  """(rows, K // BLOCK) scales -> the scale_tiles(rows) layout (as in jax's tests)."""
  rows, kk = scales.shape
  return scales.reshape(rows // 128, 4, 32, kk // 4, 4).transpose(0, 3, 2, 1, 4).reshape(
      scale_tiles(rows))


def main():
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.uniform(-1, 1, (M, K)), jnp.float8_e4m3fn)
  w = np.zeros((N, K))
  w[:EXPERTS] = rng.uniform(-1, 1, (EXPERTS, K))  # zero weights for any padding experts
  y = jnp.asarray(w, jnp.float8_e4m3fn)
  # Powers of two from 2**-5 to 2**4, one per BLOCK elements of K: exact in e8m0.
  xs = np.exp2(rng.integers(-5, 5, (M, K // BLOCK)).astype(np.float64))
  ys = np.ones((SCALE_ROWS, K // BLOCK))
  ys[:N] = np.exp2(rng.integers(-5, 5, (N, K // BLOCK)).astype(np.float64))
  x_scale = jnp.asarray(format_scales(xs), SCALE_DTYPE)
  y_scale = jnp.asarray(format_scales(ys), SCALE_DTYPE)
  if tcgen05_device() is None:
    lower_only(scaled_matmul, x, y, x_scale, y_scale)
    return
  out = np.asarray(scaled_matmul(x, y, x_scale, y_scale))[:, :EXPERTS]
  ref = ((np.asarray(x, np.float64) * np.repeat(xs, BLOCK, axis=1))
         @ (np.asarray(y, np.float64)[:EXPERTS] * np.repeat(ys[:EXPERTS], BLOCK, axis=1)).T)
  # e4m3 products times powers of two are exact in f32; only the f32 summation order differs,
  # which costs about 3e-7 of max |ref| (absolute) where sums cancel.
  np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-5 * np.abs(ref).max())
  print("mxfp8 router:", EXPERTS, "experts OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
