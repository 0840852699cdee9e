"""Pallas warp-MMA projection tested over a table of named tile configs."""

import dataclasses

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class ProjConfig:
  x_dtype: jnp.dtype
  w_dtype: jnp.dtype
  block_m: int
  block_n: int
  block_k: int


CONFIGS = {
    "prefill": ProjConfig(
        jnp.dtype("bfloat16"), jnp.dtype("bfloat16"), 128, 64, 128
    ),
    # Small-batch decode: only a couple of sequences in flight.
    "decode": ProjConfig(
        jnp.dtype("bfloat16"), jnp.dtype("bfloat16"), 32, 64, 128
    ),
    # Checkpoint ships fp16 weights; activations stay bf16.
    "fp16_ckpt": ProjConfig(
        jnp.dtype("bfloat16"), jnp.dtype("float16"), 128, 64, 128
    ),
}


def projection(x, w_nk, cfg: ProjConfig):
  def body(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(
        jnp.zeros((cfg.block_m, cfg.block_n), jnp.float32),
        plgpu.Layout.MMA_ACC(cfg.x_dtype),
    )
    xs = plgpu.load(
        x_ref, layout=plgpu.Layout.MMA_LHS(cfg.x_dtype), optimized=False
    )
    ws = plgpu.load(
        w_ref.T, layout=plgpu.Layout.MMA_RHS(cfg.w_dtype), optimized=False
    )
    o_ref[...] = plgpu.mma(acc, xs, ws)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((cfg.block_m, cfg.block_n), jnp.float32),
      compiler_params=plgpu.CompilerParams(
          lowering_semantics=plgpu.LoweringSemantics.Lane
      ),
  )(x, w_nk)


class ProjectionTest(parameterized.TestCase):

  @parameterized.named_parameters(
      *[dict(testcase_name=name, cfg_name=name) for name in sorted(CONFIGS)]
  )
  def test_projection(self, cfg_name):
    cfg = CONFIGS[cfg_name]
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (cfg.block_m, cfg.block_k)).astype(cfg.x_dtype)
    w = rng.uniform(-1, 1, (cfg.block_n, cfg.block_k)).astype(cfg.w_dtype)
    out = projection(x, w, cfg)
    ref = x.astype(np.float32) @ w.astype(np.float32).T
    np.testing.assert_allclose(out, ref, atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
