"""How operands and accumulators are built: splat, loads, astype, raw constructors, Pallas arrays."""

from __future__ import annotations

import pytest
from _analysis_lint import PALLAS_VERSIONS, all_of, check, lint, only, related_rows, row_of

# ---------------------------------------------------------------- mgpu: splat


@pytest.mark.parametrize(
    ("const", "expect"),
    [
        ("utils.c(0, i32)", []),
        ("utils.c(0, ty=i32)", []),
        ("arith.constant(i32, 0)", []),
        ("arith.constant(result=i32, value=0)", []),
        ("utils.c(0.0, f32)", ["MMA101"]),
        ("arith.constant(f32, 0.0)", ["MMA101"]),
        ("arith.constant(ir.IntegerType.get_signless(16), 0)", ["MMA101"]),
    ],
)
def test_splat_constant_spellings(const: str, expect: list[str]) -> None:
    signed = ", is_signed=True" if "f32" not in const else ""
    code = f'''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith

i8 = ir.IntegerType.get_signless(8)
i32 = ir.IntegerType.get_signless(32)
f32 = ir.F32Type.get()


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  lay = mgpu.MMALayouts(i8, m_warps=2)
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat({const}, shape=(64, 64), layout=lay.acc{signed})
  acc = mgpu.mma(acc, a, b)
  acc.store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((64, 32), jnp.int8), jax.ShapeDtypeStruct((64, 32), jnp.int8)),
    jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
'''
    check(code, expect)


def test_splat_positional_layout_and_missing_is_signed() -> None:
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def ones_product():
      i8 = ir.IntegerType.get_signless(8)
      i32 = ir.IntegerType.get_signless(32)
      lay = mgpu.MMALayouts(i8)
      one = utils.c(1, i8)
      a = mgpu.FragmentedArray.splat(one, (64, 32), lay.lhs, is_signed=True)
      b = mgpu.FragmentedArray.splat(one, (32, 64), lay.rhs, is_signed=True)
      acc = mgpu.FragmentedArray.splat(utils.c(0, i32), (64, 64), lay.acc)
      return mgpu.mma(acc, a, b)
    '''
    report = check(code, ["MMA202"])
    diag = only(report, "MMA202")
    assert diag["predicted_error"]["message"].endswith("got _is_signed=None for i32")
    assert diag["call"]["acc"]["source"] == "splatted"
    assert diag["call"]["acc"]["layout"]["kind"] == "mma_acc"


def test_float_acc_splat_with_is_signed_is_a_construction_error() -> None:
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def bf16_tile():
      bf16 = ir.BF16Type.get()
      lay = mgpu.MMALayouts(bf16)
      a = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (64, 16), layout=lay.lhs)
      b = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (16, 64), layout=lay.rhs)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0.0, ir.F32Type.get()), (64, 64), layout=lay.acc, is_signed=False)
      return mgpu.mma(acc, a, b)
    '''
    report = check(code, ["MMA202"])
    assert only(report, "MMA202")["predicted_error"]["message"].endswith(
        "got _is_signed=False for f32"
    )


# ---------------------------------------------------------------- mgpu: loads

LOAD_KERNEL = '''
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 64, 64


def kernel(ctx, x_ref, w_ref, bias_ref, out_ref, smem):
  lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  x = mgpu.FragmentedArray.{x_load}
  w = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(w_ref, (1, 0)), layout=lay.rhs, is_signed={w_sign}, optimized=False)
  bias = mgpu.FragmentedArray.load_untiled(bias_ref, layout=lay.acc, is_signed={bias_sign},
                                           optimized=False)
  mgpu.mma(bias, x, w).store_untiled(out_ref, optimized=False)


x = np.zeros((M, K), np.int8)
w = np.zeros((N, K), {w_dtype})
bias = np.zeros((M, N), np.int32)
out = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1), (x, w, bias), jax.ShapeDtypeStruct((M, N), jnp.int32), ()
)(x, w, bias)
'''

X_UNTILED = "load_untiled(x_ref, layout=lay.lhs, is_signed=True, optimized=False)"


@pytest.mark.parametrize(
    ("x_load", "w_sign", "w_dtype", "bias_sign", "expect"),
    [
        (X_UNTILED, "True", "np.int8", "True", []),
        (X_UNTILED, "False", "np.uint8", "True", []),
        (X_UNTILED, "False", "np.int8", "True", ["MMA203"]),
        (X_UNTILED, "True", "np.uint8", "True", ["MMA203"]),
        (X_UNTILED, "None", "np.int8", "True", ["MMA202"]),
        (X_UNTILED, "True", "np.int8", "False", ["MMA201"]),
        (X_UNTILED, "True", "np.int8", "None", ["MMA202"]),
        ("load_untiled(x_ref, layout=lay.lhs, optimized=False)", "True", "np.int8", "True", ["MMA202"]),
        ("load_untiled(x_ref, layout=lay.lhs, is_signed=False, optimized=False)", "True", "np.int8",
         "True", ["MMA203"]),
        # A strided load is not the MMA lhs layout: jax raises "Expected MMALayouts.lhs layout".
        ("load_strided(x_ref, is_signed=True)", "True", "np.int8", "True", ["MMA301"]),
    ],
)
def test_untiled_and_strided_loads(
    x_load: str, w_sign: str, w_dtype: str, bias_sign: str, expect: list[str]
) -> None:
    code = LOAD_KERNEL.format(x_load=x_load, w_sign=w_sign, w_dtype=w_dtype, bias_sign=bias_sign)
    report = check(code, expect)
    if "MMA203" in expect:
        diag = only(report, "MMA203")
        assert diag["predicted_error"] is None
        assert diag["severity"] == "error"


def test_sign_mismatch_note_points_at_the_data() -> None:
    code = LOAD_KERNEL.format(x_load=X_UNTILED, w_sign="False", w_dtype="np.int8", bias_sign="True")
    diag = only(check(code, ["MMA203"]), "MMA203")
    rows = related_rows(diag)
    assert rows[row_of(code, "w = np.zeros")] == "the data is int8"
    assert diag["call"]["b"]["data_dtype"] == "int8"
    assert diag["call"]["b"]["signedness"] == "unsigned"


def test_load_tiled_from_smem_scratch() -> None:
    # Shaped like jax's test_warp_mma_smem: operands land in SMEM scratch, then load_tiled.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jax._src.lib.mlir.dialects import arith

    DTYPE = jnp.int8
    m, n, k = 64, 64, 32
    tiling = (8, 16)


    def kernel(ctx, a, b, out, smem):
      smem_a, smem_b, barriers = smem
      ctx.async_copy(src_ref=a, dst_ref=smem_a, swizzle=16,
                     gmem_transform=(mgpu.TileTransform(tiling),), barrier=barriers[0])
      ctx.async_copy(src_ref=b, dst_ref=smem_b, swizzle=16,
                     gmem_transform=(mgpu.TileTransform(tiling),), barrier=barriers[1])
      for i in range(2):
        barriers[i].wait()
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE), m_warps=4)
      a_fa = mgpu.FragmentedArray.load_tiled(smem_a, layout=layouts.lhs, is_signed=True, swizzle=16)
      b_t = utils.memref_transpose(smem_b, (1, 0, 3, 2))
      b_fa = mgpu.FragmentedArray.load_tiled(b_t, layout=layouts.rhs, is_signed={b_sign}, swizzle=16)
      c0 = arith.constant(utils.dtype_to_ir_type(jnp.int32), 0)
      acc = mgpu.FragmentedArray.splat(c0, shape=(m, n), layout=layouts.acc, is_signed=True)
      mgpu.mma(acc, a_fa, b_fa).store_untiled(out, optimized=False)


    smem_shapes = (
        jax.ShapeDtypeStruct(mgpu.tile_shape((m, k), tiling), DTYPE),
        jax.ShapeDtypeStruct(mgpu.tile_shape((n, k), tiling), DTYPE),
        mgpu.TMABarrier(2),
    )
    a = jnp.zeros((m, k), DTYPE)
    b = jnp.zeros((n, k), DTYPE)
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (a, b), jax.ShapeDtypeStruct((m, n), jnp.int32), smem_shapes
    )(a, b)
    '''
    check(code.format(b_sign="True"), [])
    report = check(code.format(b_sign="False"), ["MMA203"])
    assert only(report, "MMA203")["call"]["b"]["data_dtype"] == "int8"


# ---------------------------------------------------------------- mgpu: conversions and raw arrays


def test_astype_with_is_signed_upcast_from_int4() -> None:
    # int4 weights widened to int8 in registers; the astype names the signedness.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir

    i8 = ir.IntegerType.get_signless(8)


    def kernel(ctx, x_ref, w4_ref, out_ref, smem):
      lay = mgpu.MMALayouts(i8)
      x = mgpu.FragmentedArray.load_untiled(x_ref, layout=lay.lhs, is_signed=True, optimized=False)
      w4 = mgpu.FragmentedArray.load_untiled(w4_ref, layout=lay.rhs, is_signed=True, optimized=False)
      w = w4.astype(i8, is_signed={sign})
      acc = mgpu.FragmentedArray.splat(utils.c(0, ir.IntegerType.get_signless(32)), (64, 64),
                                       layout=lay.acc, is_signed=True)
      mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 32), jnp.int8), jax.ShapeDtypeStruct((32, 64), jnp.int4)),
        jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
    '''
    check(code.format(sign="True"), [])
    check(code.format(sign="None"), ["MMA202"])


def test_acc_astype_float_to_int_without_is_signed() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def kernel(ctx, x_ref, w_ref, c_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
      x = mgpu.FragmentedArray.load_untiled(x_ref, layout=lay.lhs, is_signed=True, optimized=False)
      w = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(w_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
      c = mgpu.FragmentedArray.load_untiled(c_ref, layout=lay.acc, optimized=False)
      acc = c.astype(ir.IntegerType.get_signless(32))
      mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 32), jnp.int8), jax.ShapeDtypeStruct((64, 32), jnp.int8),
         jax.ShapeDtypeStruct((64, 64), jnp.float32)),
        jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
    '''
    report = check(code, ["MMA202"])
    diag = only(report, "MMA202")
    assert diag["call"]["acc"]["source"] == "converted"
    assert diag["predicted_error"]["message"].endswith("got _is_signed=None for i32")


def test_broadcasted_iota_operand() -> None:
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def iota_tile():
      i8 = ir.IntegerType.get_signless(8)
      lay = mgpu.MMALayouts(i8)
      a = mgpu.FragmentedArray.broadcasted_iota(i8, (64, 32), 1, lay.lhs, is_signed=True)
      b = mgpu.FragmentedArray.broadcasted_iota(i8, (32, 64), 0, layout=lay.rhs, is_signed=True)
      acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (64, 64), layout=lay.acc)
      return mgpu.mma(acc, a, b)
    '''
    check(code, ["MMA101"])


def test_raw_constructor_rewrapping_known_registers() -> None:
    # The registers of a signed int32 array re-wrapped as unsigned: MMA201.
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def tile():
      i8 = ir.IntegerType.get_signless(8)
      i32 = ir.IntegerType.get_signless(32)
      lay = mgpu.MMALayouts(i8)
      a = mgpu.FragmentedArray.splat(utils.c(1, i8), (64, 32), layout=lay.lhs, is_signed=True)
      b = mgpu.FragmentedArray.splat(utils.c(1, i8), (32, 64), layout=lay.rhs, is_signed=True)
      zero = mgpu.FragmentedArray.splat(utils.c(0, i32), (64, 64), layout=lay.acc, is_signed=True)
      acc = mgpu.FragmentedArray(_registers=zero.registers, _layout=zero.layout, _is_signed=False)
      return mgpu.mma(acc, a, b)
    '''
    report = lint(code)
    assert [d.code for d in report.diagnostics] == ["MMA201"]


def test_raw_constructor_with_unknown_registers_is_silent() -> None:
    # tokamax builds arrays from hand-made registers: their element type is unknowable here.
    code = '''
    import numpy as np
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def tile(regs, a, b):
      lay = mgpu.MMALayouts(ir.BF16Type.get())
      new_registers = np.empty_like(regs)
      for idx, reg in np.ndenumerate(regs):
        new_registers[idx] = utils.bitcast(reg, ir.IntegerType.get_signless(32))
      acc = mgpu.FragmentedArray(_registers=new_registers, _layout=lay.acc, _is_signed=None)
      return mgpu.mma(acc, a, b)
    '''
    report = lint(code)
    assert report.diagnostics == ()
    assert report.calls == 1 and report.known_calls == 0


# ---------------------------------------------------------------- Pallas arrays

PALLAS_ACC = '''
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
DT = {operand}


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), {out}),
    scratch_types=[plgpu.SMEM((M, N), jnp.float32)],
    compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
)
def kernel(a_ref, b_ref, o_ref, acc_smem):
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DT))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(DT))
  acc = plgpu.layout_cast({acc}, plgpu.Layout.MMA_ACC(DT))
  o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)


result = kernel(jnp.ones((M, K), DT), jnp.ones((N, K), DT))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize(
    ("operand", "out", "acc", "expect"),
    [
        ("jnp.bfloat16", "jnp.bfloat16", "jnp.zeros((M, N), jnp.float32)", []),
        ("jnp.bfloat16", "jnp.bfloat16", "jnp.zeros((M, N))", []),
        ("jnp.bfloat16", "jnp.bfloat16", "jnp.zeros((M, N), o_ref.dtype)", ["MMA102"]),
        ("jnp.bfloat16", "jnp.float16", "jnp.zeros(o_ref.shape, o_ref.dtype)", ["MMA102"]),
        ("jnp.bfloat16", "jnp.float32", "jnp.zeros(o_ref.shape, o_ref.dtype)", []),
        ("jnp.bfloat16", "jnp.bfloat16", "jnp.zeros_like(a)", ["MMA102"]),
        ("jnp.int8", "jnp.int32", "jnp.zeros_like(a)", ["MMA101"]),
        ("jnp.int8", "jnp.int32", "jnp.zeros_like(a, dtype=jnp.int32)", []),
        ("jnp.int8", "jnp.int32", "jnp.full((M, N), 0, dtype=jnp.int32)", []),
        ("jnp.int8", "jnp.int32", "jnp.full((M, N), 0, jnp.float32)", ["MMA101"]),
        ("jnp.int8", "jnp.int32", "jnp.ones((M, N), jnp.int32) * 0", []),
        ("jnp.int8", "jnp.int32", "jnp.zeros((M, N), jnp.uint32)", ["MMA201"]),
        ("jnp.int8", "jnp.int32", "o_ref[...]", []),
        ("jnp.int8", "jnp.float32", "o_ref[...]", ["MMA101"]),
        ("jnp.int8", "jnp.int32", "acc_smem[...]", ["MMA101"]),
        ("jnp.float16", "jnp.float16", "acc_smem[...]", []),
        ("jnp.float16", "jnp.float16",
         "plgpu.load(acc_smem, layout=plgpu.Layout.MMA_ACC(DT))", []),
        ("jnp.float16", "jnp.float16", "jnp.zeros((M, N), jnp.float16).astype(jnp.float32)", []),
        ("jnp.float16", "jnp.float16", "jnp.zeros((M, N), jnp.float32).astype(DT)", ["MMA102"]),
    ],
)
def test_pallas_accumulator_sources(
    operand: str, out: str, acc: str, expect: list[str], version: str
) -> None:
    check(PALLAS_ACC.format(operand=operand, out=out, acc=acc), expect, target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_operand_read_with_subscript(version: str) -> None:
    # `x_ref[...]` then a layout_cast: the same facts as plgpu.load.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(x_ref, y_ref, o_ref):
      x = plgpu.layout_cast(x_ref[...], plgpu.Layout.MMA_LHS(jnp.float8_e4m3fn))
      y = plgpu.layout_cast(y_ref[...], plgpu.Layout.MMA_RHS(jnp.float8_e4m3fn))
      acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(jnp.float8_e4m3fn))
      o_ref[...] = plgpu.mma(acc, x, y)


    kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
    out = kernel(jnp.zeros((64, 32), jnp.float8_e4m3fn), jnp.zeros((32, 64), {y_dtype}))
    '''
    check(code.format(y_dtype="jnp.float8_e4m3fn"), [], target_jax=version)
    report = check(code.format(y_dtype="jnp.float8_e5m2"), ["MMA103"], target_jax=version)
    assert only(report, "MMA103")["predicted_error"]["message"] == (
        "Operand dtypes must match: float8_e4m3fn != float8_e5m2"
    )


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_load_of_ref_slice_keeps_dtype(version: str) -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    BM, BN, BK = 64, 64, 64


    def body(x_ref, w_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((BM, BN), jnp.int32), plgpu.Layout.MMA_ACC(jnp.int8))
      for kk in range(2):
        x = plgpu.load(x_ref.at[:, pl.ds(kk * BK, BK)], layout=plgpu.Layout.MMA_LHS(jnp.int8))
        w = plgpu.load(w_ref.at[:, pl.ds(kk * BK, BK)].T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
        acc = plgpu.mma(acc, x, w)
      o_ref[...] = acc


    kernel = plgpu.kernel(
        body, out_type=jax.ShapeDtypeStruct((BM, BN), jnp.int32),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
    out = kernel(jnp.zeros((BM, 2 * BK), {x_dtype}), jnp.zeros((BN, 2 * BK), jnp.int8))
    '''
    check(code.format(x_dtype="jnp.int8"), [], target_jax=version)
    check(code.format(x_dtype="jnp.uint8"), ["MMA103"], target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_mma_result_is_the_next_accumulator(version: str) -> None:
    # The result of mma keeps the accumulator's dtype through a k-loop.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    T = 64


    def body(x_ref, w_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((T, T), jnp.float16), plgpu.Layout.MMA_ACC(jnp.float16))

      def step(i, acc):
        x = plgpu.load(x_ref.at[:, pl.ds(i * T, T)], layout=plgpu.Layout.MMA_LHS(jnp.float16))
        w = plgpu.load(w_ref.at[pl.ds(i * T, T), :], layout=plgpu.Layout.MMA_RHS(jnp.float16))
        return plgpu.mma(acc, x, w)

      o_ref[...] = jax.lax.fori_loop(0, 4, step, acc)


    kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((T, T), jnp.float16))
    out = kernel(jnp.zeros((T, 4 * T), jnp.float16), jnp.zeros((4 * T, T), jnp.float16))
    '''
    report = check(code, ["MMA102"], target_jax=version)
    assert len(all_of(report, "MMA102")) == 1


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_transpose_ref_keeps_the_dtype(version: str) -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(q_ref, k_ref, o_ref):
      q = plgpu.load(q_ref, layout=plgpu.Layout.MMA_LHS(jnp.bfloat16), optimized=False)
      k = plgpu.load(plgpu.transpose_ref(k_ref.at[pl.ds(0, 64)], (1, 0)),
                     layout=plgpu.Layout.MMA_RHS(jnp.bfloat16), optimized=False)
      s = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(jnp.bfloat16))
      o_ref[...] = plgpu.mma(s, q, k)


    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
                     compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
    y = f(jnp.zeros((64, 64), jnp.bfloat16), jnp.zeros((128, 64), jnp.float16))
    '''
    report = check(code, ["MMA103"], target_jax=version)
    assert only(report, "MMA103")["call"]["b"]["dtype"] == "float16"


# ---------------------------------------------------------------- accumulators no operand accepts

ACC_ONLY = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(x, w):
  dtype = x.dtype

  def body(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((128, 64), {acc}), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(dtype))
    b = plgpu.load(w_ref, layout=plgpu.Layout.MMA_RHS(dtype))
    o_ref[...] = plgpu.mma(acc, a, b)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))
  return f(x, w)
'''


@pytest.mark.parametrize("acc", ["jnp.float32", "jnp.int32"])
def test_valid_for_some_operand_accumulator_with_unknown_operands_is_silent(acc: str) -> None:
    report = lint(ACC_ONLY.format(acc=acc), target_jax="0.11")
    assert report.diagnostics == ()


@pytest.mark.parametrize(
    ("acc", "version", "code"),
    [
        ("jnp.bfloat16", "0.11", "MMA102"),
        ("jnp.float16", "0.11", "MMA102"),
        ("jnp.float16", "0.12", "MMA102"),
        ("jnp.int16", "0.11", "MMA101"),
        ("jnp.int8", "0.12", "MMA101"),
        ("jnp.uint32", "0.11", "MMA201"),
        ("jnp.uint32", "0.12", "MMA201"),
    ],
)
def test_accumulator_wrong_for_every_operand_dtype(acc: str, version: str, code: str) -> None:
    # tokamax-style kernel: the operand dtype is the caller's, but no operand dtype makes this
    # accumulator legal (f32 for floats, int32 for integers; f64 only with f64 operands, 0.12).
    report = lint(ACC_ONLY.format(acc=acc), target_jax=version)
    diag = only(report, code)
    assert "which no operand dtype accepts" in diag["message"]
    # Which message jax raises depends on the operands: none is predicted, no fix is offered;
    # what each kind of operand raises is listed.
    assert diag["predicted_error"] is None
    assert diag["unpredicted"]
    assert diag["fix"] is None
    by_operand = {p["operand_dtype"]: p for p in diag["predicted_by_operand"]}
    assert sorted(by_operand) == ["bfloat16", "int8"]
    assert by_operand["int8"]["code"] in ("MMA101", "MMA201")
    assert by_operand["int8"]["message"] == f"Only int32 accumulator supported for integer and boolean operands. Got {acc[4:]}"
    assert by_operand["bfloat16"]["code"] == "MMA102"
    assert diag["call"]["a"]["dtype"] is None
    rows = related_rows(diag)
    assert row_of(ACC_ONLY, "acc = plgpu.layout_cast(") in rows


def _x64(code: str) -> str:
    return code.replace("import jax\n", 'import jax\njax.config.update("jax_enable_x64", True)\n', 1)


def test_float64_accumulator_with_unknown_operands_is_flagged_only_where_no_f64_operands_exist() -> None:
    # With x64 a float64 accumulator is real; jax 0.12 takes it for float64 operands.
    assert [d.code for d in lint(_x64(ACC_ONLY.format(acc="jnp.float64")), target_jax="0.11").diagnostics] == ["MMA102"]
    assert lint(_x64(ACC_ONLY.format(acc="jnp.float64")), target_jax="0.12").diagnostics == ()
    # Without x64, jnp.zeros(..., jnp.float64) is float32: nothing to report.
    assert lint(ACC_ONLY.format(acc="jnp.float64"), target_jax="0.11").diagnostics == ()


ACC_ONLY_MGPU = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def build(dtype, m, n, k):
  def kernel(ctx, a_ref, b_ref, out_ref, smem):
    lay = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
    a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=utils.is_signed(dtype), optimized=False)
    b = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=utils.is_signed(dtype), optimized=False)
    acc = mgpu.FragmentedArray.splat(utils.c({value}, {acc}), (m, n), layout=lay.acc{signed})
    mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

  return mgpu.as_gpu_kernel(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((m, k), dtype), jax.ShapeDtypeStruct((n, k), dtype)),
      jax.ShapeDtypeStruct((m, n), jnp.float32), ())
'''


@pytest.mark.parametrize(
    ("acc", "value", "signed", "expect"),
    [
        ("ir.BF16Type.get()", "0.0", "", ["MMA102"]),
        ("ir.F16Type.get()", "0.0", "", ["MMA102"]),
        ("ir.IntegerType.get_signless(16)", "0", ", is_signed=True", ["MMA101"]),
        ("ir.IntegerType.get_signless(32)", "0", ", is_signed=False", ["MMA201"]),
        # Legal for some operand dtype: silent while the operands are unknown.
        ("ir.F32Type.get()", "0.0", "", []),
        ("ir.IntegerType.get_signless(32)", "0", ", is_signed=True", []),
        ("ir.IntegerType.get_signless(32)", "0", ", is_signed=utils.is_signed(dtype)", []),
    ],
)
def test_mgpu_accumulator_wrong_for_every_operand_dtype(acc: str, value: str, signed: str, expect: list[str]) -> None:
    report = lint(ACC_ONLY_MGPU.format(acc=acc, value=value, signed=signed), target_jax="0.11")
    assert [d.code for d in report.diagnostics] == expect
    for d in report.diagnostics:
        assert d.predicted_error is None and d.fix is None
        by_operand = {p.operand_dtype: (p.code, p.error.message) for p in d.predicted_by_operand}
        assert by_operand["bfloat16"] == ("MMA102", "Only f32 accumulator supported for floating operands.")
        assert by_operand["int8"][0] in ("MMA101", "MMA201")


# ---------------------------------------------------------------- arguments by role


ACC_LAST = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def kernel(ctx, x_ref, w_ref, out_ref, smem):
  lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  x = mgpu.FragmentedArray.load_untiled(x_ref, layout=lay.lhs, is_signed=True, optimized=False)
  w = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(w_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (64, 64), layout=lay.acc, is_signed=True)
  for _ in range(4):
    acc = mgpu.mma(x, w, acc)
  acc.store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((64, 64), jnp.int8), jax.ShapeDtypeStruct((64, 64), jnp.int8)),
    jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
'''


def test_accumulator_passed_last_is_described_by_role() -> None:
    report = lint(ACC_LAST)
    diag = only(report, "MMA105")
    assert diag["call"]["argument_order"] == "a_b_acc"
    assert diag["call"]["acc"]["element_type"] == "i32"
    rows = related_rows(diag)
    assert any(m.startswith("this is the accumulator") for m in rows.values())
    assert row_of(ACC_LAST, "acc = mgpu.FragmentedArray.splat(") in rows


def test_diagnostic_describes_the_best_known_path() -> None:
    report = lint(ACC_LAST)
    diag = only(report, "MMA105")
    assert diag["call"]["a"]["dtype"] == "int8"
    assert diag["call"]["a"]["shape"] == [64, 64]
    # Square tiles, so the shapes agree; jax then compares the i8 lhs against the i32 "b".
    assert diag["predicted_error"]["message"] == "Dtype mismatch: i8 != i32"
