"""A collective (2-CTA) Pallas MMA whose A in TMEM was allocated without collective=True."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, 2 * N), jnp.float32),
    scratch_types=[
        plgpu.TMEM((M, K), jnp.bfloat16, packed=True),
        plgpu.SMEM((N, K), jnp.bfloat16, transforms=transforms),
        plgpu.TMEM((M, 2 * N), jnp.float32, collective=True),
        plgpu.Barrier(orders_tensor_core=True),
    ],
    cluster=(2,),
    cluster_names=("x",),
)
def kernel(a_gmem, b_gmem, out_gmem, a_tmem, b_smem, acc_tmem, barrier):
  plgpu.tcgen05_mma(acc_tmem, a_tmem, plgpu.transpose_ref(b_smem, (1, 0)), barrier, accumulate=False, collective_axis="x")
  plgpu.barrier_wait(barrier)
  out_gmem[...] = plgpu.async_load_tmem(acc_tmem)


kernel(jnp.ones((M, K), jnp.bfloat16), jnp.ones((N, K), jnp.bfloat16))
