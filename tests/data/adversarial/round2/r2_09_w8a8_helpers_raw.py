"""W8A8 warp-MMA: activations and weights loaded by separate helpers."""

import dataclasses

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
class W8A8Config:
  act_dtype: jnp.dtype
  weight_dtype: jnp.dtype
  m: int = 128
  n: int = 128
  k: int = 128
  m_warps: int = 4


CONFIGS = {
    "s8s8": W8A8Config(jnp.dtype("int8"), jnp.dtype("int8")),
    "s8s8_m2": W8A8Config(jnp.dtype("int8"), jnp.dtype("int8"), m_warps=2),
}


def _load_activations(ref, cfg):
  layouts = mgpu.MMALayouts(
      utils.dtype_to_ir_type(cfg.act_dtype), m_warps=cfg.m_warps
  )
  return mgpu.FragmentedArray.load_untiled(
      ref, layout=layouts.lhs, is_signed=utils.is_signed(cfg.act_dtype),
      optimized=False,
  )


def _load_weights(ref, cfg):
  # Weights come out of the packer as raw bytes.
  layouts = mgpu.MMALayouts(
      utils.dtype_to_ir_type(cfg.weight_dtype), m_warps=cfg.m_warps
  )
  return mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=False,
      optimized=False,
  )


def _zero_acc(shape, operand_dtype):
  acc_layout = mgpu.MMALayouts(utils.dtype_to_ir_type(operand_dtype)).acc
  i32 = utils.dtype_to_ir_type(jnp.int32)
  return mgpu.FragmentedArray.splat(
      arith.constant(i32, 0), shape, layout=acc_layout, is_signed=True
  )


def w8a8_kernel(cfg):
  def kernel(ctx, x_ref, w_ref, out_ref, scratch):
    del ctx, scratch
    x = _load_activations(x_ref, cfg)
    w = _load_weights(w_ref, cfg)
    acc = _zero_acc((cfg.m, cfg.n), cfg.act_dtype)
    mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)
  return kernel


class W8A8Test(parameterized.TestCase):

  @parameterized.named_parameters(
      *[(f"_{name}", cfg) for name, cfg in CONFIGS.items()]
  )
  def test_w8a8(self, cfg):
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (cfg.m, cfg.k)).astype(cfg.act_dtype)
    w = rng.integers(-128, 128, (cfg.n, cfg.k)).astype(cfg.weight_dtype)
    out = mgpu.as_gpu_kernel(
        w8a8_kernel(cfg),
        (1, 1, 1),
        (128, 1, 1),
        (x, w),
        jax.ShapeDtypeStruct((cfg.m, cfg.n), jnp.int32),
        (),
    )(x, w)
    np.testing.assert_array_equal(
        out, x.astype(np.int32) @ w.astype(np.int32).T
    )


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
