"""bf16 matmul on Hopper with a narrower swizzle for the weight tiles.

The weights arrive from a producer kernel that writes 64B-swizzled tiles.
"""

import functools

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


def _tiled(dtype, swizzle):
  elems = swizzle // jnp.dtype(dtype).itemsize
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


@functools.partial(jax.jit, static_argnames=("tile_m", "tile_n"))
def bf16_matmul(a, b, tile_m=128, tile_n=128):
  dtype = jnp.bfloat16
  m, k = a.shape
  _, n = b.shape
  tile_k = 64
  a_transforms = _tiled(dtype, 128)
  b_transforms = _tiled(dtype, 64)

  def kernel(a_gmem, b_gmem, o_gmem, o_smem):
    pid_m = lax.axis_index("m")
    pid_n = lax.axis_index("n")

    def body(_, a_smem, b_smem, acc):
      def do_wgmma(acc_ref):
        plgpu.wgmma(acc_ref, a_smem, b_smem)
      return pl.run_state(do_wgmma)(plgpu.ACC.init(acc))

    acc0 = plgpu.layout_cast(
        jnp.zeros((tile_m, tile_n), jnp.float32), plgpu.Layout.WGMMA
    )
    final_acc = plgpu.emit_pipeline(
        body,
        in_specs=[
            plgpu.BlockSpec((tile_m, tile_k), lambda ki: (pid_m, ki),
                            transforms=a_transforms),
            plgpu.BlockSpec((tile_k, tile_n), lambda ki: (ki, pid_n),
                            transforms=b_transforms),
        ],
        grid=(k // tile_k,),
        max_concurrent_steps=2,
        init_carry=acc0,
    )(a_gmem, b_gmem)
    o_smem[...] = final_acc.astype(dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(
        o_smem, o_gmem.at[pl.ds(pid_m * tile_m, tile_m), pl.ds(pid_n * tile_n, tile_n)]
    )
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((m, n), dtype),
      scratch_types=[plgpu.SMEM((tile_m, tile_n), dtype)],
      grid=(m // tile_m, n // tile_n),
      grid_names=("m", "n"),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )(a, b)
