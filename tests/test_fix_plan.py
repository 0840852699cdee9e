"""Fix planning and verification, in process: which fix, where, how safe, and when none."""

from __future__ import annotations

import _kernels as k
import pytest

from mmalint.catalog import load_catalog
from mmalint.fixes.apply import apply_fixes
from mmalint.fixes.fixer import fix_text
from mmalint.fixes.plan import PLANNERS
from mmalint.pipeline.file import lint_text
from mmalint.settings import Settings

SETTINGS = Settings(target_jax="0.12")


def _only(text: str):  # type: ignore[no-untyped-def]
    report = lint_text("k.py", text, SETTINGS)
    assert len(report.diagnostics) == 1, [d.message for d in report.diagnostics]
    return report.diagnostics[0]


def test_catalog_fixable_matches_the_planners() -> None:
    """`mmalint rules` shows a Fix column from the TOML; it must say what the code does."""
    catalog = load_catalog()
    for code, rule in catalog.rules.items():
        if code == "MMA001":
            assert rule.fixable  # fixed by the suppression layer, not by a planner
            continue
        assert rule.fixable == (code in PLANNERS), code
        if rule.fixable:
            assert rule.fix_title and rule.fix_safety, code


def test_splatted_mgpu_accumulator_becomes_signed_int32() -> None:
    d = _only(k.MGPU_INT8_F32_ACC)
    assert d.code == "MMA101" and d.fix is not None
    assert d.fix.applicability == "safe"
    assert sorted(e.content for e in d.fix.edits) == [
        ", is_signed=True", "0", "ir.IntegerType.get_signless(32)"
    ]
    assert apply_fixes(k.MGPU_INT8_F32_ACC, [d]).text == k.MGPU_INT8_F32_ACC_FIXED


def test_fix_in_a_helper_is_unsafe() -> None:
    d = _only(k.MGPU_HELPER_ACC)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    # The edits are in the helper, where the value was decided, not on the mma line.
    assert {e.range.start.row for e in d.fix.edits} == {11, 12}


def test_accumulator_dtype_variable_is_an_unsafe_fix_at_the_assignment() -> None:
    d = _only(k.PALLAS_ACC_VARIABLE)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    (edit,) = d.fix.edits
    assert edit.content == "jnp.int32" and edit.range.start.row == 10


def test_no_fix_when_the_constant_is_shared_by_float_worlds() -> None:
    # ACC_DTYPE -> int32 would fix the int8 world and break the bfloat16 one: verification
    # applies the planned edit, sees MMA102 appear, and drops the fix.
    d = _only(k.PALLAS_SWEEP_SHARED_CONSTANT)
    assert d.code == "MMA101" and d.fix is None


def test_swap_is_safe_and_keeps_the_layout_of_a_multiline_call() -> None:
    result = fix_text("k.py", k.PALLAS_SWAPPED, SETTINGS)
    assert result.fixed == {"MMA105": 1}
    assert result.text == k.PALLAS_CLEAN
    assert result.report.diagnostics == ()


def test_fixing_twice_changes_nothing() -> None:
    once = fix_text("k.py", k.MGPU_HELPER_ACC, SETTINGS, unsafe=True)
    assert once.fixed_count == 1 and once.report.diagnostics == ()
    twice = fix_text("k.py", once.text, SETTINGS, unsafe=True)
    assert twice.text == once.text and twice.fixed_count == 0


def test_safe_mode_leaves_unsafe_fixes() -> None:
    result = fix_text("k.py", k.MGPU_HELPER_ACC, SETTINGS, unsafe=False)
    assert result.fixed_count == 0 and result.text == k.MGPU_HELPER_ACC


def test_every_rule_example_fix_resolves_its_finding() -> None:
    """For every invalid example in rules/: after --fix --unsafe-fixes, each finding that had
    a fix is gone and no new finding appeared (the fix loop's contract)."""
    catalog = load_catalog()
    checked = 0
    for rule in catalog.rules.values():
        for example in rule.examples:
            if example.kind != "invalid" or example.options:
                continue
            for version in example.versions or ("0.12",):
                settings = Settings(target_jax=version)
                before = lint_text("e.py", example.code, settings)
                fixable = [d for d in before.diagnostics if d.fix is not None]
                result = fix_text("e.py", example.code, settings, unsafe=True)
                assert result.converged
                assert result.fixed_count == len(fixable), rule.code
                left = sorted(d.code or "" for d in result.report.diagnostics)
                assert left == sorted(d.code or "" for d in before.diagnostics if d.fix is None)
                checked += len(fixable)
    assert checked >= 6


def test_overlapping_fixes_are_not_applied_together() -> None:
    from mmalint.diagnostics import Diagnostic, Edit, Fix, Location, Range

    def diag(start: int, end: int, content: str) -> Diagnostic:
        where = Range("x.py", Location(1, start), Location(1, end))
        return Diagnostic("MMA101", "n", "error", "m", where, fix=Fix("safe", "t", (Edit(content, where),)))

    text = "abcdef\n"
    result = apply_fixes(text, [diag(1, 4, "X"), diag(3, 5, "Y"), diag(5, 6, "Z")])
    assert result.text == "XdZf\n"
    assert len(result.applied) == 2


def test_inserted_text_takes_the_file_line_ending() -> None:
    from mmalint.diagnostics import Diagnostic, Edit, Fix, Location, Range

    where = Range("x.py", Location(1, 2), Location(1, 2))
    d = Diagnostic("MMA101", "n", "error", "m", where, fix=Fix("safe", "t", (Edit("1\n2", where),)))
    assert apply_fixes("ab\r\ncd\r\n", [d]).text == "a1\r\n2b\r\ncd\r\n"


# ------------------------------------------------------------------ an argument goes in at a point

_INT8_KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M = N = K = 128


def kernel(ctx, a_ref, b_ref, acc_ref, out_ref, smem):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.{dtype}))
{a}  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,{b_signed} optimized=False)
{acc}  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.{dtype}), jax.ShapeDtypeStruct((N, K), jnp.{dtype}),
     jax.ShapeDtypeStruct((M, N), jnp.{acc_dtype})),
    jax.ShapeDtypeStruct((M, N), jnp.{acc_dtype}), ())
'''
_SIGNED_ACC = "  acc = mgpu.FragmentedArray.load_untiled(acc_ref, layout=layouts.acc, is_signed=True, optimized=False)\n"


def _int8_lhs(a: str) -> str:
    return _INT8_KERNEL.format(dtype="int8", acc_dtype="int32", a=a, b_signed=" is_signed=True,", acc=_SIGNED_ACC)


def _only_inserted(before: str, after: str) -> bool:
    import difflib

    ops = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return all(tag in ("equal", "insert") for tag, *_ in ops)


def _only_deleted(before: str, after: str) -> bool:
    return _only_inserted(after, before)


_INSERTIONS = {
    "one per line, trailing comma, comments inside": (
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "      a_ref,  # the lhs\n"
        "      layout=layouts.lhs,\n"
        "      optimized=False,  # slow but simple\n"
        "  )\n",
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "      a_ref,  # the lhs\n"
        "      layout=layouts.lhs,\n"
        "      optimized=False,  # slow but simple\n"
        "      is_signed=True,\n"
        "  )\n",
    ),
    "one per line, no trailing comma": (
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "      a_ref,\n"
        "      layout=layouts.lhs,\n"
        "      optimized=False  # slow but simple\n"
        "  )\n",
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "      a_ref,\n"
        "      layout=layouts.lhs,\n"
        "      optimized=False, is_signed=True  # slow but simple\n"
        "  )\n",
    ),
    "a comment line before the closing parenthesis": (
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "        a_ref,\n"
        "        layout=layouts.lhs,\n"
        "\n"
        "        # optimized=True once the layout is tiled\n"
        "  )\n",
        "  a = mgpu.FragmentedArray.load_untiled(\n"
        "        a_ref,\n"
        "        layout=layouts.lhs,\n"
        "        is_signed=True,\n"
        "\n"
        "        # optimized=True once the layout is tiled\n"
        "  )\n",
    ),
    "closing parenthesis after the last argument": (
        "  a = mgpu.FragmentedArray.load_untiled(a_ref,\n"
        "                                        layout=layouts.lhs, optimized=False)\n",
        "  a = mgpu.FragmentedArray.load_untiled(a_ref,\n"
        "                                        layout=layouts.lhs, optimized=False, is_signed=True)\n",
    ),
    "one line, trailing comma": (
        "  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False,)\n",
        "  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False, is_signed=True,)\n",
    ),
}


@pytest.mark.parametrize("case", list(_INSERTIONS))
def test_is_signed_goes_in_at_a_point_of_the_call(case: str) -> None:
    """MMA202's fix inserts `is_signed=` into the creation call and changes nothing else:
    indentation, comments, trailing comma and closing parenthesis stay where they were."""
    call, fixed_call = _INSERTIONS[case]
    text, expected = _int8_lhs(call), _int8_lhs(fixed_call)
    d = _only(text)
    assert d.code == "MMA202" and d.fix is not None and d.fix.applicability == "safe"
    result = fix_text("k.py", text, SETTINGS)
    assert result.fixed == {"MMA202": 1} and result.report.diagnostics == ()
    assert result.text == expected
    assert _only_inserted(text, result.text)


def test_is_signed_insertion_keeps_crlf() -> None:
    call, fixed_call = _INSERTIONS["one per line, trailing comma, comments inside"]
    text = _int8_lhs(call).replace("\n", "\r\n")
    assert fix_text("k.py", text, SETTINGS).text == _int8_lhs(fixed_call).replace("\n", "\r\n")


def _bf16(acc: str) -> str:
    return _INT8_KERNEL.format(dtype="bfloat16", acc_dtype="float32", b_signed="", acc=acc, a=(
        "  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)\n"))


_REMOVALS = {
    "an argument on a line of its own": (
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref,  # the accumulator\n"
        "      layout=layouts.acc,\n"
        "      is_signed=True,  # copied from the int8 kernel\n"
        "  )\n",
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref,  # the accumulator\n"
        "      layout=layouts.acc,\n"
        "  )\n",
    ),
    "on one line, between two arguments": (
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc, is_signed=True, optimized=False\n"
        "  )\n",
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc, optimized=False\n"
        "  )\n",
    ),
    "the last argument, no trailing comma": (
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref,  # the accumulator\n"
        "      layout=layouts.acc, is_signed=True)\n",
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref,  # the accumulator\n"
        "      layout=layouts.acc)\n",
    ),
    "between two arguments, a comment after it": (
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc, is_signed=True,  # the layout of the int8 kernel\n"
        "      optimized=False)\n",
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc,  # the layout of the int8 kernel\n"
        "      optimized=False)\n",
    ),
    "between two arguments on a continued line": (
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc, is_signed=True,\n"
        "      optimized=False)\n",
        "  acc = mgpu.FragmentedArray.load_untiled(\n"
        "      acc_ref, layout=layouts.acc,\n"
        "      optimized=False)\n",
    ),
}


@pytest.mark.parametrize("case", list(_REMOVALS))
def test_is_signed_of_a_float_comes_out_and_nothing_else(case: str) -> None:
    call, fixed_call = _REMOVALS[case]
    text, expected = _bf16(call), _bf16(fixed_call)
    result = fix_text("k.py", text, SETTINGS)
    assert result.fixed == {"MMA202": 1} and result.report.diagnostics == ()
    assert result.text == expected
    assert _only_deleted(text, result.text)


def test_the_splat_fix_adds_is_signed_in_the_layout_of_the_call() -> None:
    """MMA101's fix on a multi-line splat: the same point insertion, beside its other edits."""
    call = (
        "  acc = mgpu.FragmentedArray.splat(\n"
        "      utils.c(0.0, ir.F32Type.get()),  # zero\n"
        "      (M, N),\n"
        "      layout=layouts.acc,\n"
        "  )\n"
    )
    one_line = "  acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (M, N), layout=layouts.acc)\n"
    text = k.MGPU_INT8_F32_ACC.replace(one_line, call)
    result = fix_text("k.py", text, SETTINGS)
    assert result.fixed == {"MMA101": 1} and result.report.diagnostics == ()
    assert result.text == k.MGPU_INT8_F32_ACC.replace(one_line, (
        "  acc = mgpu.FragmentedArray.splat(\n"
        "      utils.c(0, ir.IntegerType.get_signless(32)),  # zero\n"
        "      (M, N),\n"
        "      layout=layouts.acc,\n"
        "      is_signed=True,\n"
        "  )\n"
    ))


_TCGEN05_PALLAS = '''
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(a, b):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
      scratch_types=[
          plgpu.SMEM((128, 64), jnp.{operand}),
          plgpu.SMEM((64, 128), jnp.{operand}),
          plgpu.TMEM((128, 128), {acc}),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, mma_barrier):
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False{scales})
  return kernel(a, b)
'''


@pytest.mark.parametrize(
    ("operand", "acc", "target"),
    [("bfloat16", "jnp.float16", "jnp.float32"), ("int8", "jnp.float32", "jnp.int32"),
     ("float16", "jnp.int32", "jnp.float32"), ("int8", '"float16"', '"int32"')],
)
def test_tcgen05_accumulator_dtype_is_fixed_where_it_is_written(operand: str, acc: str, target: str) -> None:
    text = _TCGEN05_PALLAS.format(operand=operand, acc=acc, scales="")
    d = _only(text)
    assert d.code == "MMA701" and d.fix is not None
    (edit,) = d.fix.edits
    assert edit.content == target and edit.range.start.row == 16
    # The dtype is written inside the TMEM allocation that builds only this accumulator, in the
    # launch decorating the kernel that makes the call.
    assert d.fix.applicability == "safe"
    result = fix_text("k.py", text, SETTINGS, unsafe=True)
    assert result.fixed == {"MMA701": 1} and result.report.diagnostics == ()
    assert result.text == text.replace(f"plgpu.TMEM((128, 128), {acc})", f"plgpu.TMEM((128, 128), {target})")


def test_no_tcgen05_accumulator_fix_for_f4_without_scales() -> None:
    # No accumulator takes unscaled f4 operands: the scales are missing (MMA708), not the dtype.
    text = _TCGEN05_PALLAS.format(operand="float4_e2m1fn", acc="jnp.float16", scales="")
    report = lint_text("k.py", text, SETTINGS)
    assert all(d.code != "MMA701" or d.fix is None for d in report.diagnostics)


def test_tcgen05_accumulator_dtype_from_a_constant_is_an_unsafe_fix() -> None:
    text = _TCGEN05_PALLAS.format(operand="int8", acc="ACC", scales="").replace(
        "\n\ndef matmul", "\nACC = jnp.float32\n\n\ndef matmul")
    d = _only(text)
    assert d.code == "MMA701" and d.fix is not None and d.fix.applicability == "unsafe"
    (edit,) = d.fix.edits
    assert edit.content == "jnp.int32" and edit.range.start.row == 8
