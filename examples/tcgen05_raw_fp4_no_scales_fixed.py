"""An MXFP4 (block-scaled float4_e2m1fn) Blackwell GEMM in raw Mosaic GPU: one float8_e8m0fnu
scale per 32 elements of K for each operand, copied to TMEM and passed to the MMA."""

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05
from jaxlib.mlir import ir

M, N, K = 128, 128, 512
SWIZZLE = 128
TILING = (8, 2 * SWIZZLE)  # 4-bit elements: 256 per 128-byte row
BLOCK = 32  # MXFP4: one e8m0 scale per 32 elements of K


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 copies from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def kernel(ctx, lhs, rhs, lhs_scales_gmem, rhs_scales_gmem, out, scratch):
  (lhs_smem, rhs_smem, lhs_scales_smem, rhs_scales_smem, barriers, mma_barrier,
   acc, lhs_scales, rhs_scales) = scratch
  for src, dst, barrier in ((lhs, lhs_smem, barriers[0]), (rhs, rhs_smem, barriers[1])):
    ctx.async_copy(
        src_ref=src,
        dst_ref=dst,
        swizzle=SWIZZLE,
        gmem_transform=mgpu.TileTransform(TILING),
        barrier=barrier,
    )
  ctx.async_copy(src_ref=lhs_scales_gmem, dst_ref=lhs_scales_smem, barrier=barriers[2])
  ctx.async_copy(src_ref=rhs_scales_gmem, dst_ref=rhs_scales_smem, barrier=barriers[3])
  for i in range(4):
    barriers[i].wait()
  with mgpu.single_thread():
    tcgen05.async_copy_scales_smem_to_tmem(lhs_scales_smem, lhs_scales)
    tcgen05.async_copy_scales_smem_to_tmem(rhs_scales_smem, rhs_scales)
    tcgen05.mma(
        acc,
        lhs_smem,
        mgpu.memref_transpose(rhs_smem, (1, 0, 3, 2)),
        a_swizzle=SWIZZLE,
        b_swizzle=SWIZZLE,
        a_scale=lhs_scales,
        b_scale=rhs_scales,
        accumulate=False,
    )
    tcgen05.commit_arrive(mma_barrier)
  mma_barrier.wait(orders_tensor_core=True)
  acc.load().store_untiled(out, optimized=False)


def build(x, y, x_scales, y_scales):
  out_shape = jax.ShapeDtypeStruct((M, N), jnp.float32)
  args = (x, y, x_scales, y_scales)
  with mlir.make_ir_context(), ir.Location.unknown():  # scales_layout() needs the context
    scratch = [
        jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), x.dtype),
        jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), y.dtype),
        jax.ShapeDtypeStruct(scale_tiles(M), jnp.float8_e8m0fnu),
        jax.ShapeDtypeStruct(scale_tiles(N), jnp.float8_e8m0fnu),
        mgpu.Barrier(1, num_barriers=4),
        mgpu.Barrier(1),
        mgpu.TMEM((M, N), jnp.float32),
        mgpu.TMEM((M, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
        mgpu.TMEM((N, K // BLOCK), jnp.float8_e8m0fnu, layout=tcgen05.scales_layout()),
    ]
    return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), args, out_shape, scratch)

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
  # float4_e2m1fn holds 0, +-0.5, +-1, +-1.5, +-2, +-3, +-4, +-6: uniform(-6, 6) rounds onto them.
  x = jnp.asarray(rng.uniform(-6, 6, (M, K)), jnp.float4_e2m1fn)
  y = jnp.asarray(rng.uniform(-6, 6, (N, K)), jnp.float4_e2m1fn)  # weights stored (N, K)
  # e8m0 scales: biased exponents 122..131, i.e. powers of two from 2**-5 to 2**4.
  xs_bits = rng.integers(122, 132, (M, K // BLOCK)).astype(np.uint8)
  ys_bits = rng.integers(122, 132, (N, K // BLOCK)).astype(np.uint8)
  x_scales = jax.lax.bitcast_convert_type(jnp.asarray(format_scales(xs_bits)), jnp.float8_e8m0fnu)
  y_scales = jax.lax.bitcast_convert_type(jnp.asarray(format_scales(ys_bits)), jnp.float8_e8m0fnu)
  matmul = build(x, y, x_scales, y_scales)  # every check of tcgen05.mma() runs while it is built
  if tcgen05_device() is None:
    lower_only(matmul, x, y, x_scales, y_scales)
    return
  out = np.asarray(matmul(x, y, x_scales, y_scales))
  xs = np.repeat(np.exp2(xs_bits.astype(np.float64) - 127), BLOCK, axis=1)
  ys = np.repeat(np.exp2(ys_bits.astype(np.float64) - 127), BLOCK, axis=1)
  ref = (np.asarray(x, np.float64) * xs) @ (np.asarray(y, np.float64) * ys).T
  # Scaled e2m1 products are exact in f32; only the f32 summation order differs, which over
  # K = 512 terms up to 36 * 2**8 costs about 1e-7 of max |ref| (absolute) where sums cancel.
  np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())
  print("mxfp4 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
