"""Warp MMA with K tiling in a Python loop; layout plumbing factored into helpers."""

import dataclasses
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class KTiledConfig:
  dtype: jnp.dtype = jnp.dtype("bfloat16")
  m: int = 128
  n: int = 64
  block_k: int = 64
  k_tiles: int = 4
  m_warps: int = 4

  @property
  def k(self) -> int:
    return self.block_k * self.k_tiles


def _mma_layouts(dtype, m_warps):
  """Returns (lhs, rhs, acc) layouts for a warp-level MMA."""
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
  return layouts.lhs, layouts.rhs, layouts.acc


def _load_k_tile(ref, kt, *, block_k, layout, dtype, transpose=False):
  tile = utils.memref_slice(ref, (slice(None), utils.ds(kt * block_k, block_k)))
  if transpose:
    tile = utils.memref_transpose(tile, (1, 0))
  return mgpu.FragmentedArray.load_untiled(
      tile, layout=layout, is_signed=utils.is_signed(dtype), optimized=False
  )


def ktiled_kernel(ctx, a_ref, b_ref, out_ref, scratch, *, cfg: KTiledConfig):
  del ctx, scratch
  rhs_layout, lhs_layout, acc_layout = _mma_layouts(cfg.dtype, cfg.m_warps)
  acc = mgpu.FragmentedArray.splat(
      arith.constant(utils.dtype_to_ir_type(jnp.float32), 0.0),
      (cfg.m, cfg.n),
      layout=acc_layout,
  )
  load = functools.partial(_load_k_tile, block_k=cfg.block_k, dtype=cfg.dtype)
  for kt in range(cfg.k_tiles):
    a = load(a_ref, kt, layout=lhs_layout)
    b = load(b_ref, kt, layout=rhs_layout, transpose=True)
    acc = mgpu.mma(acc, a, b)
  acc.store_untiled(out_ref, optimized=False)


class KTiledTest(parameterized.TestCase):

  @parameterized.named_parameters(
      dict(testcase_name="_bf16", cfg=KTiledConfig()),
      dict(testcase_name="_f16_m2",
           cfg=KTiledConfig(dtype=jnp.dtype("float16"), m_warps=2)),
  )
  def test_ktiled(self, cfg):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (cfg.m, cfg.k)).astype(cfg.dtype)
    b = rng.uniform(-1, 1, (cfg.n, cfg.k)).astype(cfg.dtype)
    out = mgpu.as_gpu_kernel(
        functools.partial(ktiled_kernel, cfg=cfg),
        (1, 1, 1),
        (128, 1, 1),
        (a, b),
        jax.ShapeDtypeStruct((cfg.m, cfg.n), jnp.float32),
        (),
    )(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(out, ref, atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
