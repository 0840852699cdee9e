"""MMA709, Pallas under Warpgroup semantics (chosen explicitly, as jax 0.10 defaults to Lane):
bf16 activations with f16 weights. The dialect verifier of `mosaic_gpu.tcgen05_mma` refuses
the pair before `tcgen05.mma()` runs."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 64
TILING = (8, 64)  # 16-bit elements: 128-byte rows
transforms = (plgpu.TilingTransform(TILING), plgpu.SwizzleTransform(128))


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
    scratch_types=[
        plgpu.SMEM((M, K), jnp.bfloat16, transforms=transforms),
        plgpu.SMEM((K, N), jnp.float16, transforms=transforms),
        plgpu.TMEM((M, N), jnp.float32),
        plgpu.Barrier(num_arrivals=2),
        plgpu.Barrier(orders_tensor_core=True),
    ],
    compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),
)
def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
  plgpu.barrier_wait(tma_barrier)
  plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)  # error: [MMA709]
  plgpu.barrier_wait(mma_barrier)
  out_gmem[...] = plgpu.async_load_tmem(acc_tmem)


kernel(jnp.ones((M, K), jnp.bfloat16), jnp.ones((K, N), jnp.float16))
