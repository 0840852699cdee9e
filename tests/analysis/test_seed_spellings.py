"""The seed's spellings (issue 11): `from_tensor(x)` in every spelling and `mma.mma`.

The mission's example is `acc = fa.from_tensor(jnp.zeros((m, n), jnp.float32))` then
`acc = mma.mma(a_i8, b_i8, acc)`. With jax's own `fa` and `mma` it fails four times, each mistake
hiding the next (checked on the CPU with jax 0.10.2 and 0.12.0.1): MMA501, MMA503, MMA105, MMA101.
The facts of each spelling are in `tests/facts/from_tensor.md`; these are the findings, and the
precision traps that must stay silent.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from _analysis_lint import ALL_VERSIONS, all_of, check, codes_of, lint, only, row_of

from mmalint.engine import check_text
from mmalint.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# An int8 warp-level kernel; {imports} and {acc} (the accumulator line) and {call} vary.
KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
{imports}
m, n, k = 128, 128, 128


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  a_i8 = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  b_i8 = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=True, optimized=False)
  {acc}
  acc = {call}
  acc.store_untiled(out_ref, optimized=False)


matmul = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((m, k), jnp.int8), jax.ShapeDtypeStruct((n, k), jnp.int8)),
    jax.ShapeDtypeStruct((m, n), jnp.int32), ())
'''

SEED_ACC = "acc = fa.from_tensor(jnp.zeros((m, n), jnp.float32))"
SEED_CALL = "mma.mma(a_i8, b_i8, acc)"
JAX_FA_MMA = ("from jax.experimental.mosaic.gpu import fragmented_array as fa\n"
              "from jax.experimental.mosaic.gpu import mma\n")
WRAPPER = "from kernel_helpers import from_tensor  # a library mmalint cannot read\n"


def kernel(imports: str, acc: str, call: str = "mgpu.mma(acc, a_i8, b_i8)") -> str:
    return KERNEL.format(imports=imports, acc=acc, call=call)


# ---------------------------------------------------------------- the seed's example


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_the_seed_example_reports_its_four_mistakes_in_the_order_jax_meets_them(version: str) -> None:
    code = (EXAMPLES / "seed_from_tensor_mma.py").read_text()
    report = check_text("seed.py", code, Settings(target_jax=version))
    assert codes_of(report) == ["MMA101", "MMA105", "MMA501", "MMA503"]
    acc_row, call_row = row_of(code, SEED_ACC, 1), row_of(code, SEED_CALL, 1)  # 0: the docstring

    mma501 = only(report, "MMA501")
    assert mma501["location"]["row"] == acc_row
    assert mma501["message"].startswith("`fa.from_tensor` does not exist in jax " + version)
    assert mma501["predicted_error"] == {"exception": "AttributeError", "message": "has no attribute 'from_tensor'",
                                         "jax_version": version, "match": "contains"}
    assert mma501["masked_by"] is None

    mma503 = only(report, "MMA503")
    assert mma503["location"]["row"] == call_row
    assert "`mma.mma` raises AttributeError: `mma` is already the function" in mma503["message"]
    assert mma503["help"] == "call the function itself: `mma(...)`, not `mma.mma(...)`"
    assert mma503["predicted_error"]["message"] == "'function' object has no attribute 'mma'"

    # What jax raises once `mma.mma` is `mma`: the accumulator last (the real mistake, named).
    mma105 = only(report, "MMA105")
    assert mma105["message"] == ("`mgpu.mma` takes the accumulator first: this call passes the float32 "
                                 "accumulator last, as `b`")
    assert mma105["predicted_error"]["message"] == "Dtype mismatch: i8 != f32"
    assert mma105["masked_by"] == "MMA503"
    first_note = mma105["related"][0]
    assert first_note["message"].startswith("as written, jax raises AttributeError here first (MMA503)")
    assert first_note["location"]["row"] == call_row

    # ... and once the accumulator is first, the float32 accumulator for int8 operands.
    mma101 = only(report, "MMA101")
    assert mma101["message"] == ("`mgpu.mma` with int8 operands needs a signed int32 accumulator, but the "
                                 "accumulator is float32")
    assert mma101["predicted_error"]["message"] == "Only s32 accumulator supported for integer operands."
    assert mma101["masked_by"] == "MMA105"
    notes = {r["message"]: r["location"]["row"] for r in mma101["related"]}
    assert notes["accumulator created here as float32"] == acc_row


def test_the_seed_fix_changes_the_order_and_the_dtype_and_leaves_the_names() -> None:
    from mmalint.fixes.fixer import fix_text
    from mmalint.pipeline.file import LintOptions

    code = (EXAMPLES / "seed_from_tensor_mma.py").read_text()
    fixed = fix_text("seed.py", code, Settings(target_jax="0.12"), LintOptions(), unsafe=True).text
    assert "acc = fa.from_tensor(jnp.zeros((m, n), jnp.int32))" in fixed
    assert "acc = mma.mma(acc, a_i8, b_i8)" in fixed
    # The names have no automatic fix: they stay reported.
    assert codes_of(check_text("seed.py", fixed, Settings(target_jax="0.12"))) == ["MMA501", "MMA503"]


# ---------------------------------------------------------------- from_tensor in jax's namespace


@pytest.mark.parametrize(("spelling", "message"), [
    ("fa.from_tensor", "has no attribute 'from_tensor'"),
    ("mgpu.from_tensor", "has no attribute 'from_tensor'"),
    ("fa.FragmentedArray.from_tensor", "type object 'FragmentedArray' has no attribute 'from_tensor'"),
    ("mgpu.FragmentedArray.from_tensor", "type object 'FragmentedArray' has no attribute 'from_tensor'"),
])
@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_from_tensor_read_from_jax_is_an_attribute_error(spelling: str, message: str, version: str) -> None:
    code = kernel("from jax.experimental.mosaic.gpu import fragmented_array as fa\n",
                  f"acc = {spelling}(jnp.zeros((m, n), jnp.int32), layout=layouts.acc)")
    report = check(code, ["MMA501"], target_jax=version)
    diag = only(report, "MMA501")
    assert diag["location"]["row"] == row_of(code, f"{spelling}(")
    assert diag["message"].startswith(f"`{spelling}` does not exist in jax {version}")
    assert diag["predicted_error"]["message"] == message


def test_a_module_that_assigns_jaxs_from_tensor_has_one() -> None:
    code = kernel("from jax.experimental.mosaic.gpu import fragmented_array as fa\n"
                  "from kernel_helpers import make_fragment\n"
                  "fa.from_tensor = make_fragment\n",
                  "acc = fa.from_tensor(jnp.zeros((m, n), jnp.int32), layout=layouts.acc)")
    check(code, [])


# ---------------------------------------------------------------- precision traps


def test_an_int32_from_tensor_accumulator_for_int8_operands_is_clean() -> None:
    check(kernel(WRAPPER, "acc = from_tensor(jnp.zeros((m, n), jnp.int32), layout=layouts.acc)"), [])


def test_a_float32_from_tensor_accumulator_for_int8_operands_is_mma101() -> None:
    code = kernel(WRAPPER, "acc = from_tensor(jnp.zeros((m, n), jnp.float32), layout=layouts.acc)")
    diag = only(check(code, ["MMA101"]), "MMA101")
    assert diag["masked_by"] is None
    assert diag["fix"]["applicability"] == "unsafe"  # what the unread helper does is its name's word


def test_from_tensor_of_an_unknown_x_is_silent() -> None:
    code = '''
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from kernel_helpers import from_tensor


    def tile(x, a_ref, b_ref):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(b_ref, layout=layouts.rhs, is_signed=True, optimized=False)
      return mgpu.mma(from_tensor(x, layout=layouts.acc), a, b)
    '''
    report = lint(code)
    assert codes_of(report) == []
    assert report.calls == 1


@pytest.mark.parametrize(("body_dtype", "expect"), [("i32", []), ("f32", ["MMA101"])])
def test_a_user_from_tensor_is_analysed_by_its_body(body_dtype: str, expect: list[str]) -> None:
    # Named `from_tensor`, called with a float32 array: what it returns is what its body makes.
    make = {"i32": "utils.c(0, ir.IntegerType.get_signless(32)), x.shape, layout=layout, is_signed=True",
            "f32": "utils.c(0.0, ir.F32Type.get()), x.shape, layout=layout"}[body_dtype]
    code = kernel("from jaxlib.mlir import ir\n\n\n"
                  "def from_tensor(x, layout):\n"
                  f"  return mgpu.FragmentedArray.splat({make})\n",
                  "acc = from_tensor(jnp.zeros((m, n), jnp.float32), layouts.acc)")
    report = check(code, expect)
    if expect:
        notes = [r["message"] for r in only(report, "MMA101")["related"]]
        assert "accumulator created here as float32" in notes
        assert row_of(code, "return mgpu.FragmentedArray.splat") in [
            r["location"]["row"] for r in only(report, "MMA101")["related"]]


def test_mma_of_a_module_mmalint_cannot_read_is_no_mma_call() -> None:
    report = lint(kernel("from mylib import mma\n", "acc = mgpu.FragmentedArray.splat(utils.c(0.0, "
                         "utils.dtype_to_ir_type(jnp.float32)), (m, n), layout=layouts.acc)",
                         call="mma.mma(acc, a_i8, b_i8)"))
    assert codes_of(report) == []
    assert report.calls == 0


def test_mma_from_the_package_called_as_the_function_is_clean() -> None:
    check(kernel("from jax.experimental.mosaic.gpu import mma\n",
                 "acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), "
                 "(m, n), layout=layouts.acc, is_signed=True)",
                 call="mma(acc, a_i8, b_i8)"), [])


def test_the_seed_call_on_a_correct_accumulator_is_only_the_attribute_error() -> None:
    code = kernel(JAX_FA_MMA,
                  "acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), "
                  "(m, n), layout=layouts.acc, is_signed=True)",
                  call="mma.mma(acc, a_i8, b_i8)")
    check(code, ["MMA503"])


def test_an_attribute_of_the_wgmma_function_is_mma503() -> None:
    code = '''
    from jax.experimental.mosaic.gpu import wgmma

    acc = wgmma.WGMMAAccumulator.zero(64, 64)
    '''
    diag = only(check(code, ["MMA503"], known=False), "MMA503")
    assert diag["predicted_error"]["message"] == "'function' object has no attribute 'WGMMAAccumulator'"
    assert "`wgmma.WGMMAAccumulator` raises AttributeError" in diag["message"]


def test_a_dunder_of_the_mma_function_is_no_finding() -> None:
    code = '''
    from jax.experimental.mosaic.gpu import mma

    NAME = mma.__name__
    print(mma.__repr__())
    '''
    assert codes_of(lint(code)) == []


def test_a_relative_import_inside_jax_is_the_module() -> None:
    # jax's own dialect_lowering.py: `from . import wgmma`, run while the package's __init__ is
    # still importing, before `from .wgmma import wgmma as wgmma` rebinds the name.
    code = textwrap.dedent('''
    from . import wgmma


    def lower(acc, a_operand, b_ref, b_swizzle):
      acc = wgmma.WGMMAAccumulator.from_registers(acc, sync=False)
      return wgmma.wgmma(acc, a_operand, b_ref, swizzle=b_swizzle)
    ''')
    report = check_text("src/jax/experimental/mosaic/gpu/some_lowering.py", code, Settings(target_jax="0.12"))
    assert codes_of(report) == []
    assert report.calls_by_api == {"mgpu.wgmma": 1}


# ---------------------------------------------------------------- the accumulator passed last


def test_an_accumulator_of_unknown_layout_passed_last_is_told_by_its_type() -> None:
    # A kernel analysed on its own: the operands' dtypes are the caller's, their layouts are
    # known, the accumulator's layout is not (a `from_tensor` without `layout=`).
    code = '''
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from kernel_helpers import from_tensor


    def tile(t, a_ref, b_ref):
      layouts = mgpu.MMALayouts(t)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(b_ref, layout=layouts.rhs, optimized=False)
      return mgpu.mma(a, b, from_tensor(jnp.zeros((64, 64), jnp.float32)))
    '''
    report = check(code, ["MMA105"], known=False)
    assert only(report, "MMA105")["call"]["argument_order"] == "a_b_acc"


def test_an_unknown_third_argument_after_lhs_and_rhs_is_not_called_an_accumulator() -> None:
    code = '''
    from jax.experimental.mosaic import gpu as mgpu


    def tile(t, a_ref, b_ref, c):
      layouts = mgpu.MMALayouts(t)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(b_ref, layout=layouts.rhs, optimized=False)
      return mgpu.mma(a, b, c)
    '''
    assert "MMA105" not in codes_of(lint(code))


def test_the_seed_lines_read_as_a_fragment_of_the_right_facts() -> None:
    code = (EXAMPLES / "seed_from_tensor_mma.py").read_text()
    report = check_text("seed.py", code, Settings(target_jax="0.12"))
    acc = only(report, "MMA101")["call"]["acc"]
    assert (acc["dtype"], acc["signedness"], acc["shape"], acc["source"]) == ("float32", "signless", [128, 128], "created")
    assert all_of(report, "MMA301") == [] and all_of(report, "MMA303") == []
