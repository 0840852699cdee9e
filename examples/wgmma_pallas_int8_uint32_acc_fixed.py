"""A Pallas int8 GEMM (ops style, with a K pipeline) accumulating in signed int32, the only
integer accumulator wgmma has."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def int8_matmul(a, b, *, tile_m=128, tile_n=128, tile_k=128, out_dtype=jnp.int32):
  m, k = a.shape
  n, _ = b.shape
  transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

  def kernel(a_gmem, b_gmem, o_gmem, acc_ref):
    def compute(_, a_smem, b_smem):
      plgpu.wgmma(acc_ref, a_smem, b_smem.T)

    plgpu.emit_pipeline(
        compute,
        grid=(k // tile_k,),
        in_specs=[
            plgpu.BlockSpec((tile_m, tile_k), lambda ki: (0, ki), transforms=transforms),
            plgpu.BlockSpec((tile_n, tile_k), lambda ki: (0, ki), transforms=transforms),
        ],
    )(a_gmem, b_gmem)
    o_gmem[...] = acc_ref[...].astype(o_gmem.dtype)

  body = functools.partial(pl.run_scoped, acc_ref=plgpu.ACC((tile_m, tile_n), out_dtype))
  return plgpu.kernel(
      lambda a_gmem, b_gmem, o_gmem: body(lambda acc_ref: kernel(a_gmem, b_gmem, o_gmem, acc_ref)),
      out_type=jax.ShapeDtypeStruct((m, n), out_dtype),
  )(a, b)


def main():
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.integers(-128, 128, (128, 512)), jnp.int8)
  b = jnp.asarray(rng.integers(-128, 128, (128, 512)), jnp.int8)  # (N, K) weights
  out = np.asarray(int8_matmul(a, b))
  ref = np.asarray(a, np.int32) @ np.asarray(b, np.int32).T
  np.testing.assert_array_equal(out.astype(np.int64), ref)
  print("int8 matmul: OK, max |out| =", np.abs(out.astype(np.int64)).max())


if __name__ == "__main__":
  main()
