"""Idioms that look wrong and are right (mma-facts.md section 7), and their one-token-off bugs."""

from __future__ import annotations

import pytest
from _analysis_lint import PALLAS_VERSIONS, check, lint, only

# ---------------------------------------------------------------- MMA_ACC takes the operand dtype


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize(
    ("operand", "acc", "acc_layout", "lhs_layout", "rhs_layout"),
    [
        # jax's test_mma: MMA_ACC(dtype) with the operand dtype on an int32/float32 zeros array.
        ("jnp.int8", "jnp.int32", "jnp.int8", "jnp.int8", "jnp.int8"),
        ("jnp.bfloat16", "jnp.float32", "jnp.bfloat16", "jnp.bfloat16", "jnp.bfloat16"),
        # The accumulator layout is the same for every dtype: the acc dtype is fine too.
        ("jnp.bfloat16", "jnp.float32", "jnp.float32", "jnp.bfloat16", "jnp.bfloat16"),
        ("jnp.int8", "jnp.int32", "jnp.int32", "jnp.int8", "jnp.int8"),
        # Layouts compare by bit width: a float16 layout for bfloat16 data, int8 for fp8 data.
        ("jnp.bfloat16", "jnp.float32", "jnp.float16", "jnp.float16", "jnp.float16"),
        ("jnp.float8_e4m3fn", "jnp.float32", "jnp.int8", "jnp.int8", "jnp.uint8"),
        ("jnp.int8", "jnp.int32", "jnp.float8_e5m2", "jnp.uint8", "jnp.float8_e4m3fn"),
    ],
)
def test_mma_layout_dtype_arguments(
    operand: str, acc: str, acc_layout: str, lhs_layout: str, rhs_layout: str, version: str
) -> None:
    code = f'''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

m = k = 128
n = 8


def kernel(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((m, n), {acc}), plgpu.Layout.MMA_ACC({acc_layout}))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS({lhs_layout}), optimized=False)
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS({rhs_layout}), optimized=False)
  o_ref[...] = plgpu.mma(acc, a, b)


f = plgpu.kernel(
    kernel, out_type=jax.ShapeDtypeStruct((m, n), {acc}),
    compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
out = f(jnp.zeros((m, k), {operand}), jnp.zeros((n, k), {operand}))
'''
    check(code, [], target_jax=version)


def test_wgmma_layout_is_the_m_warps_4_acc_layout() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import fragmented_array as fa
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, a_ref, b_ref, c_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.float16))
      a = fa.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, optimized=False)
      b = fa.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, optimized=False)
      c = fa.FragmentedArray.load_untiled(c_ref, layout=fa.WGMMA_LAYOUT, optimized=False)
      mgpu.mma(c, a, b).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 32), jnp.float16), jax.ShapeDtypeStruct((64, 32), jnp.float16),
         jax.ShapeDtypeStruct((64, 64), jnp.float32)),
        jax.ShapeDtypeStruct((64, 64), jnp.float32), ())
    '''
    check(code, [])


# ---------------------------------------------------------------- is_signed from the operand dtype

WARP_MMA_SMEM = '''
from absl.testing import parameterized
import jax
import jax.numpy as jnp
from jax._src import test_util as jtu
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax._src.lib.mlir.dialects import arith


class Test(jtu.JaxTestCase):

  @parameterized.product(
      dtype=({dtypes}),
      m_warps=(4, 2, 1),
      mults=((1, 1), (2, 1), (1, 2), (3, 3)),
  )
  def test_warp_mma_smem(self, dtype, m_warps, mults):
    n_warps = 4 // m_warps
    m_mult, n_mult = mults
    mlir_dtype = utils.dtype_to_ir_type(dtype)
    bw = utils.bytewidth(mlir_dtype)
    m, n, k = 16 * m_warps * m_mult, 8 * n_warps * n_mult, 32 // bw
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32

    a_swizzle = b_swizzle = 16
    a_tiling = b_tiling = (8, a_swizzle // bw)

    def kernel(ctx, a, b, out, smem):
      smem_a, smem_b, barriers = smem
      ctx.async_copy(src_ref=a, dst_ref=smem_a, swizzle=a_swizzle,
                     gmem_transform=(mgpu.TileTransform(a_tiling),), barrier=barriers[0])
      ctx.async_copy(src_ref=b, dst_ref=smem_b, swizzle=b_swizzle,
                     gmem_transform=(mgpu.TileTransform(b_tiling),), barrier=barriers[1])
      for i in range(2):
        barriers[i].wait()
      mma_layouts = mgpu.MMALayouts(mlir_dtype, m_warps=m_warps)
      is_signed = utils.is_signed(dtype)
      a = mgpu.FragmentedArray.load_tiled(
          smem_a, layout=mma_layouts.lhs, is_signed=is_signed, swizzle=a_swizzle)
      smem_b_t = utils.memref_transpose(smem_b, (1, 0, 3, 2))
      b = mgpu.FragmentedArray.load_tiled(
          smem_b_t, layout=mma_layouts.rhs, is_signed=is_signed, swizzle=b_swizzle)
      c0 = arith.constant(utils.dtype_to_ir_type(acc_dtype), 0 if is_integer else 0.0)
      acc = mgpu.FragmentedArray.splat(c0, shape=(m, n), layout=mma_layouts.acc, is_signed=is_signed)
      acc = mgpu.mma(acc, a, b)
      acc.store_untiled(out, optimized=False)

    a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
    b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
    expected = a.astype(acc_dtype) @ b.astype(acc_dtype).T
    smem_shapes = (
        jax.ShapeDtypeStruct(mgpu.tile_shape((m, k), a_tiling), dtype),
        jax.ShapeDtypeStruct(mgpu.tile_shape((n, k), b_tiling), dtype),
        mgpu.TMABarrier(2),
    )
    result = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, smem_shapes)(a, b)
'''


def test_acc_is_signed_from_int8_operand_is_right() -> None:
    report = check(WARP_MMA_SMEM.format(dtypes="jnp.float16, jnp.int8,"), [])
    assert report.calls == 1


def test_acc_is_signed_from_uint8_operand_is_wrong() -> None:
    report = check(WARP_MMA_SMEM.format(dtypes="jnp.float16, jnp.int8, jnp.uint8"), ["MMA201"])
    diag = only(report, "MMA201")
    assert {w["dtype"] for w in diag["worlds"]} == {"jnp.uint8"}
    assert len(diag["worlds"]) == 12  # 3 m_warps x 4 mults


# ---------------------------------------------------------------- conditional dtypes and guards

WGMMA_STYLE = '''
from absl.testing import parameterized
import jax
import jax.numpy as jnp
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu


class Test(jtu.JaxTestCase):

  @parameterized.product(
      in_dtype=(jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn, jnp.int8, jnp.int4),
      out_dtype=(jnp.float32, jnp.float16, jnp.int32),
  )
  def test_mma_products(self, in_dtype, out_dtype):
    is_int = jnp.issubdtype(in_dtype, jnp.integer)
    if is_int and out_dtype != jnp.int32:
      self.skipTest("Integer MMA accumulates in int32")
    if not is_int and out_dtype == jnp.int32:
      self.skipTest("Float MMA cannot accumulate in int32")
{extra_guard}
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((128, 64), out_dtype), plgpu.Layout.MMA_ACC(in_dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(in_dtype))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(in_dtype))
      o_ref[...] = plgpu.mma(acc, a, b)

    f = plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 64), out_dtype))
    f(jnp.zeros((128, 128), in_dtype), jnp.zeros((64, 128), in_dtype))
'''


def test_skip_guards_leave_only_float16_acc_worlds() -> None:
    report = check(WGMMA_STYLE.format(extra_guard=""), ["MMA102"], target_jax="0.11")
    diag = only(report, "MMA102")
    assert {w["out_dtype"] for w in diag["worlds"]} == {"jnp.float16"}
    assert {w["in_dtype"] for w in diag["worlds"]} == {
        "jnp.bfloat16", "jnp.float16", "jnp.float8_e4m3fn"
    }


def test_complete_skip_guards_are_clean() -> None:
    guard = (
        "    if out_dtype == jnp.float16:\n"
        "      self.skipTest('Mosaic GPU MMA accumulates floats in f32 only')\n"
    )
    check(WGMMA_STYLE.format(extra_guard=guard), [], target_jax="0.11")


def test_assert_guard_prunes() -> None:
    guard = "    assert out_dtype != jnp.float16\n"
    check(WGMMA_STYLE.format(extra_guard=guard), [], target_jax="0.11")


# ---------------------------------------------------------------- MMALayouts that never reach mma


def test_mma_layouts_for_stmatrix_are_not_checked() -> None:
    # jax's test_stmatrix: an MMA lhs layout for int16 data, used only to store.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def kernel(ctx, out_ref, smem):
      i16 = ir.IntegerType.get_signless(16)
      layout = mgpu.MMALayouts(i16).lhs
      iota = mgpu.FragmentedArray.broadcasted_iota(i16, (64, 64), 1, layout, is_signed=False)
      iota.store_tiled(smem, swizzle=128)


    f = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (),
                           jax.ShapeDtypeStruct((64, 64), jnp.int16),
                           jax.ShapeDtypeStruct((64, 64), jnp.int16))
    '''
    report = lint(code)
    assert report.diagnostics == ()
    assert report.calls == 0


# ---------------------------------------------------------------- signedness that is fine


def test_int8_times_uint8_is_fine_in_mgpu() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, act_ref, w_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.uint8))
      act = mgpu.FragmentedArray.load_untiled(act_ref, layout=lay.lhs, is_signed=True, optimized=False)
      w = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(w_ref, (1, 0)), layout=lay.rhs, is_signed=False, optimized=False)
      acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (64, 64),
                                       layout=lay.acc, is_signed=True)
      mgpu.mma(acc, act, w).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 64), jnp.int8), jax.ShapeDtypeStruct((64, 64), jnp.uint8)),
        jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
    '''
    check(code, [])


def test_mixed_fp8_is_rejected_by_mgpu() -> None:
    # PTX has e4m3 x e5m2, but mgpu.mma compares the MLIR types and refuses.
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def tile():
      e4m3 = ir.Float8E4M3FNType.get()
      e5m2 = ir.Float8E5M2Type.get()
      lay = mgpu.MMALayouts(e4m3)
      a = mgpu.FragmentedArray.splat(utils.c(1.0, e4m3), (64, 32), layout=lay.lhs)
      b = mgpu.FragmentedArray.splat(utils.c(1.0, e5m2), (32, 64), layout=lay.rhs)
      acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (64, 64), layout=lay.acc)
      return mgpu.mma(acc, a, b)
    '''
    report = check(code, ["MMA103"])
    assert only(report, "MMA103")["predicted_error"]["message"] == "Dtype mismatch: f8E4M3FN != f8E5M2"


def test_int4_signed_data_with_int32_acc() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, a_ref, b_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int4), m_warps=1)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=False, optimized=False)
      acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (16, 32),
                                       layout=lay.acc, is_signed=True)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((16, 64), jnp.int4), jax.ShapeDtypeStruct((32, 64), jnp.uint4)),
        jax.ShapeDtypeStruct((16, 32), jnp.int32), ())
    '''
    check(code, [])


# ---------------------------------------------------------------- tokamax's GLU kernel shape

TOKAMAX_GLU = '''
import functools
import math
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def glu(x, weights, tile_m=64, tile_n=64, tile_k=64):
  m, k = x.shape
  n = weights.shape[1] // 2
  dtype = x.dtype

  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((m, n), dtype),
      scratch_types=(plgpu.SMEM((tile_m, tile_n), dtype),),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )
  def kernel(x_gmem, weights_gmem, out_gmem, out_smem):

    def compute(_, x_smem, wg_smem, wp_smem, accs):
      gates, proj = accs
      x = plgpu.load(x_smem, layout=plgpu.Layout.MMA_LHS(dtype))
      w = plgpu.load(wg_smem, layout=plgpu.Layout.MMA_RHS(dtype))
      v = plgpu.load(wp_smem, layout=plgpu.Layout.MMA_RHS(dtype))
      gates = plgpu.mma(gates, x, w)
      proj = plgpu.mma(proj, x, v)
      return gates, proj

    x_spec = plgpu.BlockSpec((tile_m, tile_k), lambda ki: (0, ki))
    w_spec = plgpu.BlockSpec((tile_k, tile_n), lambda ki: (ki, 0))
    acc = jnp.zeros(out_smem.shape, {acc_dtype})
    acc = plgpu.layout_cast(acc, plgpu.Layout.MMA_ACC(dtype))
    gates, proj = plgpu.emit_pipeline(
        compute,
        grid=(k // tile_k,),
        in_specs=(x_spec, w_spec, w_spec),
        max_concurrent_steps=2,
        init_carry=(acc, acc),
    )(x_gmem, weights_gmem.at[:, :n], weights_gmem.at[:, n:])
    out_smem[...] = (jax.nn.silu(gates) * proj).astype(out_smem.dtype)

  return kernel(x, weights)


y = glu(jnp.zeros((256, 512), {dtype}), jnp.zeros((512, 256), {dtype}))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_tokamax_glu_pipeline_carry(version: str) -> None:
    check(TOKAMAX_GLU.format(acc_dtype="jnp.float32", dtype="jnp.bfloat16"), [], target_jax=version)
    report = check(TOKAMAX_GLU.format(acc_dtype="jnp.float32", dtype="jnp.int8"),
                   ["MMA101", "MMA101"], target_jax=version)
    # Both mma calls (gates and proj) carry the float32 accumulator through the pipeline.
    assert len({d.range.start.row for d in report.diagnostics}) == 2


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_tokamax_glu_both_calls_reported(version: str) -> None:
    report = lint(TOKAMAX_GLU.format(acc_dtype="dtype", dtype="jnp.float16"), target_jax=version)
    assert sorted(d.code for d in report.diagnostics) == ["MMA102", "MMA102"]
    assert report.calls == 2


# ---------------------------------------------------------------- 64-bit dtypes without x64

X64_KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
{enable}

def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((64, 64), {acc}), plgpu.Layout.MMA_ACC({operand}))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS({operand}))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS({operand}))
  o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)


f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
                 compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
y = f(jnp.zeros((64, 64), {operand}), jnp.zeros((64, 64), {operand}))
'''


@pytest.mark.parametrize(("operand", "acc"), [("jnp.bfloat16", "jnp.float64"), ("jnp.int8", "jnp.int64")])
def test_64_bit_accumulator_is_canonicalized_without_x64(operand: str, acc: str) -> None:
    # Without jax_enable_x64 jax makes these float32/int32 (a correct accumulator); the setting
    # can also come from the JAX_ENABLE_X64 environment variable, so the dtype is unknown: silent.
    check(X64_KERNEL.format(enable="", acc=acc, operand=operand), [], target_jax="0.12", known=False)


@pytest.mark.parametrize(("operand", "acc", "code"), [("jnp.bfloat16", "jnp.float64", "MMA102"),
                                                      ("jnp.int8", "jnp.int64", "MMA101")])
def test_64_bit_accumulator_with_x64_enabled(operand: str, acc: str, code: str) -> None:
    check(X64_KERNEL.format(enable='jax.config.update("jax_enable_x64", True)\n', acc=acc,
                            operand=operand), [code], target_jax="0.12")


# ---------------------------------------------------------------- a generator function's call


def test_a_generator_function_s_call_is_no_value_of_its_body() -> None:
    # Calling it makes a generator: not the `None` its body falls off with (a generator given
    # as a dtype read as `jnp.zeros(s, None)`, float32: MMA101 reported before).
    code = '''
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def dtypes():
  yield jnp.int32


def run(acc_dtype):
  acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
  a = jnp.zeros((64, 64), jnp.int8)
  return plgpu.mma(acc, a, a)


def test():
  run(dtypes())
'''
    check(code, [], target_jax="0.11", known=False)


_OR_SHAPE = '''
import os
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def make(n, acc_dtype=jnp.int32):
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, n), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
    o_ref[...] = plgpu.mma(acc, a, b)
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, n), jnp.int32))


def test_it():
  {line}
  make(n, acc)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((n, 64), jnp.int8))
'''


@pytest.mark.parametrize(("line", "expect"), [
    # `u or 64` with `u` undecided is `u` or 64: true, and no number (it was `True`, and
    # `(u or 64) * 2` made N = 2, a tile the acc base tile does not divide)
    ('n, acc = (int(os.environ.get("N", "0")) or 64) * 2, jnp.int32', []),
    # its truth still decides a branch
    ('n, acc = 64, (jnp.float32 if (os.environ.get("X") or 1) else jnp.int32)', ["MMA101"]),
    ('n, acc = 64, (jnp.float32 if (os.environ.get("X") and 0) else jnp.int32)', []),
])
def test_an_undecided_or_is_true_and_no_value(line: str, expect: list[str]) -> None:
    check(_OR_SHAPE.replace("{line}", line), expect, target_jax="0.12", known=bool(expect))
