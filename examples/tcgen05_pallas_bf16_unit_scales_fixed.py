"""An MXFP8 GEMM tile on Blackwell in Pallas, run on the reference data quantized to
float8_e4m3fn with unit scales (the kernel's block scaling needs float8 operands)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 256
BLOCK = 32  # one e8m0 scale per 32 elements of K (MXFP8)


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 reads from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def scaled_matmul(x, y, x_scale, y_scale):
  swizzle = 128
  transforms = (
      plgpu.TilingTransform((8, swizzle // jnp.dtype(x.dtype).itemsize)),
      plgpu.SwizzleTransform(swizzle),
  )

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      scratch_types=[
          plgpu.SMEM((M, K), x.dtype, transforms=transforms),
          plgpu.SMEM((N, K), y.dtype, transforms=transforms),
          plgpu.SMEM(scale_tiles(M), jnp.float8_e8m0fnu),
          plgpu.SMEM(scale_tiles(N), jnp.float8_e8m0fnu),
          plgpu.TMEM((M, N), jnp.float32),
          plgpu.TMEM((M, K // BLOCK), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((N, K // BLOCK), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
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


REFERENCE_DTYPE = jnp.bfloat16  # the unquantized reference run


def main():
  x = jax.random.normal(jax.random.key(0), (M, K), REFERENCE_DTYPE)
  y = jax.random.normal(jax.random.key(1), (N, K), REFERENCE_DTYPE)
  unit_x_scale = jnp.ones(scale_tiles(M), jnp.float8_e8m0fnu)  # 2**0: "no scaling"
  unit_y_scale = jnp.ones(scale_tiles(N), jnp.float8_e8m0fnu)
  # Quantized to float8_e4m3fn (normal(0, 1) data is well inside its +-448 range).
  xq = x.astype(jnp.float8_e4m3fn)
  yq = y.astype(jnp.float8_e4m3fn)
  if tcgen05_device() is None:
    lower_only(scaled_matmul, xq, yq, unit_x_scale, unit_y_scale)
    return
  reference = scaled_matmul(xq, yq, unit_x_scale, unit_y_scale)
  out = np.asarray(reference)
  ref = np.asarray(xq, np.float64) @ np.asarray(yq, np.float64).T
  # e4m3 products (times 2**0) are exact in f32; only the f32 summation order differs.
  np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)
  print("mxfp8 gemm tile, unit scales: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
