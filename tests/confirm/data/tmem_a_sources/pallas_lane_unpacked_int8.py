"""Pallas under Lane semantics: an int8 A in TMEM allocated packed=False."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 128, 128
transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), jnp.int32),
    scratch_types=[
        plgpu.TMEM((M, K), jnp.int8, packed=False),
        plgpu.SMEM((N, K), jnp.int8, transforms=transforms),
        plgpu.TMEM((M, N), jnp.int32),
        plgpu.Barrier(orders_tensor_core=True),
    ],
    compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
)
def kernel(a_gmem, b_gmem, out_gmem, a_tmem, b_smem, acc_tmem, barrier):
  plgpu.tcgen05_mma(acc_tmem, a_tmem, plgpu.transpose_ref(b_smem, (1, 0)), barrier, accumulate=False)
  plgpu.barrier_wait(barrier)
  out_gmem[...] = plgpu.async_load_tmem(acc_tmem)


kernel(jnp.ones((M, K), jnp.int8), jnp.ones((N, K), jnp.int8))
