"""An MXFP8 (block-scaled e4m3) GEMM tile on Blackwell in Pallas, ported from an NVFP4 kernel:
the scales were switched to MXFP8's float8_e8m0fnu, but the block stayed NVFP4's 16 elements
of K, so A's scales have K // 16 columns. MXFP8 has one scale per 32 elements of K."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 256
BLOCK = 16  # one scale per 16 elements of K (as in the NVFP4 kernel)
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
          plgpu.SMEM(scale_tiles(N), SCALE_DTYPE),
          plgpu.TMEM((M, N), jnp.float32),
          plgpu.TMEM((M, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((N, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
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
  y = jnp.asarray(rng.uniform(-1, 1, (N, K)), jnp.float8_e4m3fn)
  # Powers of two from 2**-5 to 2**4, one per BLOCK elements of K: exact in e8m0.
  xs = np.exp2(rng.integers(-5, 5, (M, K // BLOCK)).astype(np.float64))
  ys = np.exp2(rng.integers(-5, 5, (N, K // BLOCK)).astype(np.float64))
  x_scale = jnp.asarray(format_scales(xs), SCALE_DTYPE)
  y_scale = jnp.asarray(format_scales(ys), SCALE_DTYPE)
  if tcgen05_device() is None:
    lower_only(scaled_matmul, x, y, x_scale, y_scale)
    return
  out = np.asarray(scaled_matmul(x, y, x_scale, y_scale))
  ref = ((np.asarray(x, np.float64) * np.repeat(xs, BLOCK, axis=1))
         @ (np.asarray(y, np.float64) * np.repeat(ys, BLOCK, axis=1)).T)
  # e4m3 products times powers of two are exact in f32; only the f32 summation order differs,
  # which costs about 3e-7 of max |ref| (absolute) where sums cancel.
  np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-5 * np.abs(ref).max())
  print("mxfp8 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
