"""Warp-level MMA matmul driven by a frozen config registry (raw Mosaic GPU)."""

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
class WarpMMAConfig:
  dtype: jnp.dtype
  acc_dtype: jnp.dtype
  block_m: int = 128
  block_n: int = 128
  block_k: int = 128
  m_warps: int = 4

  @property
  def is_integer(self) -> bool:
    return jnp.issubdtype(self.dtype, jnp.integer)

  @property
  def acc_is_integer(self) -> bool:
    return jnp.issubdtype(self.acc_dtype, jnp.integer)


CONFIGS = {
    "bf16": WarpMMAConfig(jnp.dtype("bfloat16"), jnp.dtype("float32")),
    "f16_m2": WarpMMAConfig(
        jnp.dtype("float16"), jnp.dtype("float32"), m_warps=2
    ),
    # Quantized path: int8 activations and weights. The accumulator was kept
    # in fp32 "so the dequant scale can be folded in directly".
    "int8": WarpMMAConfig(
        getattr(jnp, "int8"), jnp.float32, block_k=256
    ),
}


def _warp_mma_kernel(ctx, a_ref, b_ref, out_ref, scratch, *, cfg):
  del ctx, scratch
  elt = utils.dtype_to_ir_type(cfg.dtype)
  layouts = mgpu.MMALayouts(elt, m_warps=cfg.m_warps)
  operand_signed = utils.is_signed(cfg.dtype)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=operand_signed, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=operand_signed,
      optimized=False,
  )
  zero = arith.constant(
      utils.dtype_to_ir_type(cfg.acc_dtype), 0 if cfg.acc_is_integer else 0.0
  )
  acc = mgpu.FragmentedArray.splat(
      zero,
      (cfg.block_m, cfg.block_n),
      layout=layouts.acc,
      is_signed=utils.is_signed(cfg.acc_dtype),
  )
  acc = mgpu.mma(acc, a, b)
  acc.store_untiled(out_ref, optimized=False)


def _random_operands(cfg: WarpMMAConfig, seed: int = 0):
  rng = np.random.default_rng(seed)
  a_shape = (cfg.block_m, cfg.block_k)
  b_shape = (cfg.block_n, cfg.block_k)  # stored (N, K)
  if cfg.is_integer:
    info = jnp.iinfo(cfg.dtype)
    a = rng.integers(info.min, info.max + 1, a_shape).astype(cfg.dtype)
    b = rng.integers(info.min, info.max + 1, b_shape).astype(cfg.dtype)
  else:
    a = rng.uniform(-1, 1, a_shape).astype(cfg.dtype)
    b = rng.uniform(-1, 1, b_shape).astype(cfg.dtype)
  return a, b


class WarpMMAConfigTest(parameterized.TestCase):

  @parameterized.named_parameters(
      *[dict(testcase_name=f"_{name}", name=name) for name in CONFIGS]
  )
  def test_matmul(self, name):
    if not jtu.is_cuda_compute_capability_at_least("8.0"):
      self.skipTest("mma.sync needs sm_80")
    cfg = CONFIGS[name]
    a, b = _random_operands(cfg)
    kernel = functools.partial(_warp_mma_kernel, cfg=cfg)
    out_shape = jax.ShapeDtypeStruct((cfg.block_m, cfg.block_n), cfg.acc_dtype)
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), out_shape, ()
    )(a, b)
    expected = a.astype(cfg.acc_dtype) @ b.astype(cfg.acc_dtype).T
    np.testing.assert_allclose(result, expected, atol=1e-4, rtol=1e-4)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
