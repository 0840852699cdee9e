"""Pallas-Mosaic-GPU gated linear unit for SM80-class parts (warp MMA)."""

import dataclasses
import math
from typing import Callable

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
  tile_m: int = 128
  tile_n: int = 64
  tile_k: int = 32
  num_stages: int = 2


def _smem_transforms(shape, dtype):
  swizzle = plgpu.find_swizzle(shape[-1] * jnp.dtype(dtype).itemsize * 8)
  elems = swizzle * 8 // jnp.finfo(dtype).bits
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


def _block_spec(shape, dtype, index_map):
  return plgpu.BlockSpec(
      shape, index_map, transforms=_smem_transforms(shape, dtype)
  )


def gated_linear_unit(
    x: jax.Array,
    weights: jax.Array,
    *,
    activation: Callable[[jax.Array], jax.Array],
    config: Config,
) -> jax.Array:
  """Computes activation(x @ w_gate) * (x @ w_proj) with warp-level MMA."""
  if x.dtype != weights.dtype:
    raise ValueError(
        f"Matmul operands have incompatible dtypes {x.dtype} vs {weights.dtype}"
    )
  orig_shape = x.shape
  x = jax.lax.collapse(x, 0, -1)
  m, k = x.shape
  _, _, n = weights.shape
  dtype = x.dtype
  tile_m, tile_n, tile_k = config.tile_m, config.tile_n, config.tile_k
  for dim, tile, name in ((m, tile_m, "m"), (n, tile_n, "n"), (k, tile_k, "k")):
    if dim % tile:
      raise ValueError(f"{name}={dim} must be divisible by {tile}")
  grid = (m // tile_m, n // tile_n)

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), dtype),
      scratch_types=(
          plgpu.SMEM(
              (tile_m, tile_n), dtype,
              transforms=_smem_transforms((tile_m, tile_n), dtype),
          ),
      ),
      grid=(math.prod(grid),),
      grid_names=("block",),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane,
      ),
  )
  def kernel(x_gmem, w_gmem, out_gmem, out_smem):
    lin = jax.lax.axis_index("block")
    mi, ni = lin // grid[1], lin % grid[1]

    def compute(_, x_smem, wg_smem, wp_smem, accs):
      gates, proj = accs
      xs = plgpu.load(x_smem, layout=plgpu.Layout.MMA_LHS(dtype))
      wg = plgpu.load(wg_smem, layout=plgpu.Layout.MMA_RHS(dtype))
      wp = plgpu.load(wp_smem, layout=plgpu.Layout.MMA_RHS(dtype))
      return plgpu.mma(gates, xs, wg), plgpu.mma(proj, xs, wp)

    x_spec = _block_spec((tile_m, tile_k), dtype, lambda ki: (mi, ki))
    w_spec = _block_spec((tile_k, tile_n), dtype, lambda ki: (ki, ni))
    acc = jnp.zeros((tile_m, tile_n), jnp.float32)
    acc = plgpu.layout_cast(acc, plgpu.Layout.MMA_ACC(dtype))
    gates, proj = plgpu.emit_pipeline(
        compute,
        grid=(k // tile_k,),
        in_specs=(x_spec, w_spec, w_spec),
        max_concurrent_steps=config.num_stages,
        init_carry=(acc, acc),
    )(x_gmem, w_gmem.at[:, :n], w_gmem.at[:, n:])

    out_smem[...] = (proj * activation(gates)).astype(dtype)
    ms = pl.ds(mi * tile_m, tile_m)
    ns = pl.ds(ni * tile_n, tile_n)
    out_gmem[ms, ns] = out_smem[...]

  out = kernel(x, weights.reshape(k, 2 * n))
  return out.reshape(*orig_shape[:-1], n)
