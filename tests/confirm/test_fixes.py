"""The fixed signature per code, and the instruction model (no tools needed)."""

from __future__ import annotations

from typing import Any

import pytest

from mmalint.confirm.families.mma.cases import kernel_spec
from mmalint.confirm.families.mma.fixes import fixed_call, unmasked_call
from mmalint.confirm.families.mma.instruction import data_instruction, emitted_instruction
from mmalint.confirm.signature import Call, Finding, parse_findings


def _get(findings: list[dict[str, Any]], code: str, api: str, index: int = 0) -> Finding:
    matches = [f for f in parse_findings(findings) if f.code == code and f.call
               and f.call.api == api]
    return matches[index]


def _call(f: Finding) -> Call:
    assert f.call is not None
    return f.call


def _fix(f: Finding) -> Call:
    fixed = fixed_call(_call(f), f.code)
    assert fixed is not None
    return fixed


@pytest.mark.parametrize("api", ["mgpu.mma", "plgpu.mma"])
def test_fix_101_102_201(findings: list[dict[str, Any]], api: str) -> None:
    acc = _fix(_get(findings, "MMA101", api)).acc
    assert (acc.resolved_dtype, acc.signedness) == ("int32", "signed")
    assert _fix(_get(findings, "MMA102", api)).acc.resolved_dtype == "float32"
    acc = _fix(_get(findings, "MMA201", api)).acc
    assert (acc.resolved_dtype, acc.signedness) == ("int32", "signed")


def test_fix_103_104(findings: list[dict[str, Any]]) -> None:
    b = _fix(_get(findings, "MMA103", "mgpu.mma")).b
    assert (b.resolved_dtype, b.layout.bitwidth, b.layout.kind) == ("int8", 8, "mma_rhs")
    fixed = _fix(_get(findings, "MMA104", "mgpu.mma"))
    assert fixed.a.resolved_dtype == fixed.b.resolved_dtype == "bfloat16"
    assert fixed.a.layout.bitwidth == 16 and fixed.acc.resolved_dtype == "float32"


def test_fix_105_reorders(findings: list[dict[str, Any]]) -> None:
    f = _get(findings, "MMA105", "mgpu.mma")
    fixed = _fix(f)
    assert fixed.argument_order == "acc_a_b"
    assert (fixed.acc, fixed.a, fixed.b) == (_call(f).acc, _call(f).a, _call(f).b)
    assert _call(f).passed == (_call(f).a, _call(f).b, _call(f).acc)
    assert fixed.passed == (fixed.acc, fixed.a, fixed.b)


def test_fix_202_203_204(findings: list[dict[str, Any]]) -> None:
    fixed = _fix(_get(findings, "MMA202", "mgpu.mma"))
    assert fixed.a.signedness == "signed" and fixed.a.resolved_dtype == "int8"
    assert fixed.acc.signedness == "signed"
    fixed = _fix(_get(findings, "MMA203", "mgpu.mma"))
    assert fixed.a.signedness == fixed.b.signedness == "signed"
    assert _fix(_get(findings, "MMA204", "plgpu.mma")).lowering_semantics == "lane"


def test_masked_by_fixes_first(findings: list[dict[str, Any]]) -> None:
    call = _call(_get(findings, "MMA105", "mgpu.mma"))
    assert unmasked_call(call, ("MMA105",)).argument_order == "acc_a_b"
    assert unmasked_call(call, ("MMA999",)) == call


@pytest.mark.parametrize(
    ("code", "api", "emitted", "needed"),
    [
        ("MMA101", "mgpu.mma", "m16n8k32.row.col.f32.s8.s8.f32", None),
        ("MMA102", "mgpu.mma", "m16n8k16.row.col.f16.bf16.bf16.f16", None),
        ("MMA103", "mgpu.mma", "m16n8k32.row.col.s32.s8.s4.s32", None),
        ("MMA104", "mgpu.mma", "m16n8k8.row.col.f32.f32.f32.f32", None),
        ("MMA105", "mgpu.mma", "m16n8k32.row.col.s8.s8.s32.s8", None),
        ("MMA201", "mgpu.mma", "m16n8k32.row.col.u32.s8.s8.u32", None),
        ("MMA203", "mgpu.mma", "m16n8k32.row.col.s32.u8.u8.s32",
         "m16n8k32.row.col.s32.s8.s8.s32"),
        ("MMA204", "plgpu.mma", "m16n8k32.row.col.s32.s8.s8.s32",
         "m16n8k32.row.col.s32.u8.u8.s32"),
        ("MMA103", "plgpu.mma", "m16n8k32.row.col.s32.s8.u8.s32", None),
    ],
)
def test_instructions(findings: list[dict[str, Any]], code: str, api: str, emitted: str,
                      needed: str | None) -> None:
    call = _call(_get(findings, code, api))
    assert emitted_instruction(call).text == f"mma.sync.aligned.{emitted}"
    if needed:
        assert data_instruction(call).text == f"mma.sync.aligned.{needed}"


def test_kernel_spec(findings: list[dict[str, Any]]) -> None:
    f = _get(findings, "MMA105", "mgpu.mma")
    spec = kernel_spec(_call(f), f.code)
    assert [v.role for v in spec.values] == ["lhs", "rhs", "acc"]
    assert spec.intended == (2, 0, 1) and spec.data == ("int32", "int8", "int8")
    fix = kernel_spec(_fix(f), f.code, conform=True)
    assert [v.role for v in fix.values] == ["acc", "lhs", "rhs"]
    assert [v.shape for v in fix.values] == [(128, 128)] * 3
    silent = _get(findings, "MMA203", "mgpu.mma")
    values = kernel_spec(_call(silent), silent.code).values
    # int8 memory loaded with is_signed=False: the mix-up the GPU tier must expose.
    assert values[1].dtype == "int8" and values[1].is_signed is False
    pallas = _get(findings, "MMA101", "plgpu.mma")
    assert kernel_spec(_call(pallas), pallas.code).values[0].zeros


def test_kernel_spec_shrinks_huge_shapes(findings: list[dict[str, Any]]) -> None:
    import copy

    raw = copy.deepcopy(findings[0])
    for role in ("acc", "a", "b"):
        raw["call"][role]["shape"] = [4096, 4096]
    f = parse_findings([raw])[0]
    spec = kernel_spec(_call(f), f.code)
    assert spec.values[0].shape == (64, 32) and spec.notes
