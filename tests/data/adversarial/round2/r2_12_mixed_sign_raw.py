"""Warp MMA over activation/weight dtype pairs, including s8 x u8 (raw Mosaic GPU)."""

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
import jax.numpy as jnp
import numpy as np

# (activation dtype, weight dtype). mma.sync takes the signedness of each
# operand separately, so s8 activations against u8 weights is a legal pair.
PAIRS = [
    ("int8", "int8"),
    ("int8", "uint8"),
    ("uint8", "uint8"),
    ("bfloat16", "bfloat16"),
    ("float16", "float16"),
]
M, N, K = 128, 128, 128


def _operand_ir_type(dtype):
  # 16-bit floats share one register layout; build layouts from f16 so that
  # bf16 and f16 reuse the same cached layouts.
  if dtype.itemsize == 2 and jnp.issubdtype(dtype, jnp.floating):
    return ir.F16Type.get()
  return utils.dtype_to_ir_type(dtype)


def pair_kernel(act_dtype, w_dtype, *, m_warps=4):
  def kernel(ctx, x_ref, w_ref, out_ref, scratch):
    del ctx, scratch
    layouts = mgpu.MMALayouts(_operand_ir_type(act_dtype), m_warps=m_warps)
    x = mgpu.FragmentedArray.load_untiled(
        x_ref, layout=layouts.lhs, is_signed=utils.is_signed(act_dtype),
        optimized=False,
    )
    w = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(w_ref, (1, 0)),
        layout=layouts.rhs,
        is_signed=utils.is_signed(w_dtype),
        optimized=False,
    )
    if jnp.issubdtype(act_dtype, jnp.integer):
      i32 = ir.IntegerType.get_signless(32)
      acc = mgpu.FragmentedArray.splat(
          arith.constant(i32, 0), (M, N), layout=layouts.acc, is_signed=True
      )
    else:
      acc = mgpu.FragmentedArray.splat(
          arith.constant(ir.F32Type.get(), 0.0), (M, N), layout=layouts.acc
      )
    mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)

  return kernel


class MixedPairTest(parameterized.TestCase):

  @parameterized.named_parameters(
      *[dict(testcase_name=f"_{a}_{w}", act=a, wt=w) for a, w in PAIRS]
  )
  def test_pair(self, act, wt):
    act_dtype, w_dtype = jnp.dtype(act), jnp.dtype(wt)
    rng = np.random.default_rng(5)
    if jnp.issubdtype(act_dtype, jnp.integer):
      out_dtype = jnp.int32
      ai, wi = jnp.iinfo(act_dtype), jnp.iinfo(w_dtype)
      x = rng.integers(ai.min, ai.max + 1, (M, K)).astype(act_dtype)
      w = rng.integers(wi.min, wi.max + 1, (N, K)).astype(w_dtype)
    else:
      out_dtype = jnp.float32
      x = rng.uniform(-1, 1, (M, K)).astype(act_dtype)
      w = rng.uniform(-1, 1, (N, K)).astype(w_dtype)
    out = mgpu.as_gpu_kernel(
        pair_kernel(act_dtype, w_dtype),
        (1, 1, 1),
        (128, 1, 1),
        (x, w),
        jax.ShapeDtypeStruct((M, N), out_dtype),
        (),
    )(x, w)
    ref = x.astype(out_dtype) @ w.astype(out_dtype).T
    if out_dtype == jnp.int32:
      np.testing.assert_array_equal(out, ref)
    else:
      np.testing.assert_allclose(out, ref, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
