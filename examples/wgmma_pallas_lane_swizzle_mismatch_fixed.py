"""A bf16 Pallas GEMM on Hopper under Lane semantics: A and B are staged with the same
128-byte swizzle, as the wgmma instruction takes one swizzle for both operands."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 64, 128, 64
A_SWIZZLE = 128
B_SWIZZLE = 128


def transforms(swizzle):
  return (plgpu.TilingTransform((8, swizzle // 2)), plgpu.SwizzleTransform(swizzle))


def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
  plgpu.barrier_wait(barrier)

  def scope(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    return acc_ref[...]

  o_smem[...] = pl.run_scoped(scope, plgpu.ACC((M, N), jnp.float32)).astype(o_smem.dtype)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(o_smem, o_gmem)
  plgpu.wait_smem_to_gmem(0)


def gemm(a, b):
  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.bfloat16),
      scratch_types=[
          plgpu.SMEM((M, K), jnp.bfloat16, transforms=transforms(A_SWIZZLE)),
          plgpu.SMEM((K, N), jnp.bfloat16, transforms=transforms(B_SWIZZLE)),
          plgpu.SMEM((M, N), jnp.bfloat16, transforms=transforms(128)),
          plgpu.Barrier(num_arrivals=2),
      ],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )(a, b)


def main():
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.uniform(-1, 1, (M, K)), jnp.bfloat16)
  b = jnp.asarray(rng.uniform(-1, 1, (K, N)), jnp.bfloat16)
  out = np.asarray(gemm(a, b), np.float32)
  # bf16 products are exact in the f32 accumulator; the result is rounded once to bf16.
  ref = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
  np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-3)
  print("bf16 gemm tile: OK, max |out| =", np.abs(out).max())


if __name__ == "__main__":
  main()
