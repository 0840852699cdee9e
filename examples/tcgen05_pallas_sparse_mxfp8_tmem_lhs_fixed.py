"""A 2:4-sparse MXFP8 (block-scaled float8_e5m2) GEMM tile on Blackwell in Pallas: the pruned
weights are the sparse operand A, read from SMEM (a block-scaled sparse MMA takes A only there)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 256  # K is the logical (dense) contraction; A stores K // 2 per row
BLOCK = 64  # one e8m0 scale per 64 logical elements of K (32 stored ones)
SCALE_DTYPE = jnp.float8_e8m0fnu
SWIZZLE = 128
TRANSFORMS = (plgpu.TilingTransform((8, SWIZZLE)), plgpu.SwizzleTransform(SWIZZLE))  # 8-bit


def scale_tiles(rows):
  """The (rows, K // BLOCK) scales in the tiled form tcgen05 copies from SMEM."""
  return (rows // 128, K // BLOCK // 4, 32, 16)


def meta_tiles(rows):
  """The (rows, K // 4, 2) 2:4 indices in the tiled form tcgen05 copies from SMEM."""
  return (rows // 128, K // 128, 128, 64)


def sparse_matmul(w, x, meta, w_scale, x_scale):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      scratch_types=[
          plgpu.SMEM((M, K // 2), w.dtype, transforms=TRANSFORMS),
          plgpu.SMEM((N, K), x.dtype, transforms=TRANSFORMS),
          plgpu.SMEM(meta_tiles(M), jnp.uint2),
          plgpu.SMEM(scale_tiles(M), SCALE_DTYPE),
          plgpu.SMEM(scale_tiles(N), SCALE_DTYPE),
          plgpu.TMEM((M, N), jnp.float32),
          plgpu.TMEM((M, K // 2), jnp.uint2, layout=plgpu.TMEMLayout.SPARSE_METADATA_LAYOUT),
          plgpu.TMEM((M, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((N, K // BLOCK), SCALE_DTYPE, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.Barrier(num_arrivals=5),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(w_gmem, x_gmem, meta_gmem, ws_gmem, xs_gmem, out_gmem, w_smem, x_smem, meta_smem,
             ws_smem, xs_smem, acc_tmem, meta_tmem, ws_tmem, xs_tmem, tma_barrier,
             mma_barrier):
    plgpu.copy_gmem_to_smem(w_gmem, w_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(meta_gmem, meta_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(ws_gmem, ws_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(xs_gmem, xs_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.async_copy_sparse_metadata_to_tmem(meta_smem, meta_tmem)
    plgpu.async_copy_scales_to_tmem(ws_smem, ws_tmem)
    plgpu.async_copy_scales_to_tmem(xs_smem, xs_tmem)
    plgpu.tcgen05_mma(
        acc_tmem,
        w_smem,
        plgpu.transpose_ref(x_smem, (1, 0)),
        a_scale=ws_tmem,
        b_scale=xs_tmem,
        a_sparse_metadata=meta_tmem,
        accumulate=False,
    )
    plgpu.tcgen05_commit_arrive(mma_barrier)
    plgpu.barrier_wait(mma_barrier)
    out_gmem[...] = plgpu.async_load_tmem(acc_tmem)

  return kernel(w, x, meta, w_scale, x_scale)


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


def format_meta(meta):
  """(rows, K // 4, 2) 2:4 indices -> the meta_tiles(rows) layout (as in jax's tests)."""
  rows = meta.shape[0]
  return meta.reshape(meta_tiles(rows)[0], 128, K // 128, 64).transpose(0, 2, 1, 3)


def main():
  rng = np.random.default_rng(0)
  # Each group of 4 weights along K keeps 2 (indices i < j): the stored (M, K // 2) values.
  pairs = np.array([(i, j) for i in range(4) for j in range(4) if i < j])
  meta = pairs[rng.integers(0, len(pairs), (M, K // 4))]  # (M, K // 4, 2)
  w = rng.uniform(-1, 1, (M, K // 2)).astype(jnp.float8_e5m2)
  x = rng.uniform(-1, 1, (N, K)).astype(jnp.float8_e5m2)
  # Powers of two, one per BLOCK logical elements of K: exact in e8m0 and in the products.
  ws = np.exp2(rng.integers(-4, 4, (M, K // BLOCK)).astype(np.float64))
  xs = np.exp2(rng.integers(-4, 4, (N, K // BLOCK)).astype(np.float64))
  args = (jnp.asarray(w), jnp.asarray(x), jnp.asarray(format_meta(meta), jnp.uint2),
          jnp.asarray(format_scales(ws), SCALE_DTYPE), jnp.asarray(format_scales(xs), SCALE_DTYPE))
  if tcgen05_device() is None:
    lower_only(sparse_matmul, *args)
    return
  out = np.asarray(sparse_matmul(*args))
  w_dense = np.zeros((M, K // 4, 4))
  np.put_along_axis(w_dense, meta, np.asarray(w, np.float64).reshape(M, K // 4, 2), axis=-1)
  w_dense = w_dense.reshape(M, K) * np.repeat(ws, BLOCK, axis=1)
  ref = w_dense @ (np.asarray(x, np.float64) * np.repeat(xs, BLOCK, axis=1)).T
  np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-5 * np.abs(ref).max())
  print("sparse mxfp8 tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
