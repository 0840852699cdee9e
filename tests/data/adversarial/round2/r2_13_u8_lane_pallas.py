"""Unsigned 8-bit Pallas warp-MMA (asymmetric quantization) under Lane semantics."""

import dataclasses
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class AsymQuantConfig:
  operand: str = "uint8"
  m: int = 128
  n: int = 32
  k: int = 256
  # Lane semantics keeps u8 as u8 in the emitted mma.sync; the warpgroup
  # lowering currently forces integer operands to signed.
  semantics: plgpu.LoweringSemantics = plgpu.LoweringSemantics.Lane

  @property
  def dtype(self):
    return getattr(jnp, self.operand)

  @property
  def acc_dtype(self):
    return jnp.int32 if jnp.issubdtype(self.dtype, jnp.integer) else jnp.float32


def asym_matmul(cfg: AsymQuantConfig, a, b_nk):
  dtype, acc_dtype = cfg.dtype, cfg.acc_dtype

  def body(a_ref, b_ref, o_ref):
    # The accumulator layout does not depend on the element type.
    acc = plgpu.layout_cast(
        jnp.zeros((cfg.m, cfg.n), acc_dtype), plgpu.Layout.MMA_ACC(acc_dtype)
    )
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  params = plgpu.CompilerParams(lowering_semantics=cfg.semantics)
  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((cfg.m, cfg.n), acc_dtype),
      compiler_params=params,
  )(a, b_nk)


class AsymQuantTest(parameterized.TestCase):

  @parameterized.parameters("uint8", "int8")
  def test_asym(self, operand):
    cfg = AsymQuantConfig(operand=operand)
    info = jnp.iinfo(cfg.dtype)
    rng = np.random.default_rng(2)
    a = rng.integers(info.min, info.max + 1, (cfg.m, cfg.k)).astype(cfg.dtype)
    b = rng.integers(info.min, info.max + 1, (cfg.n, cfg.k)).astype(cfg.dtype)
    out = jax.jit(functools.partial(asym_matmul, cfg))(a, b)
    ref = a.astype(np.int32) @ b.astype(np.int32).T
    np.testing.assert_array_equal(out, ref)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
