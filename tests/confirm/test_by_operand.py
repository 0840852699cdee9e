"""Findings whose operand dtype mmalint did not know (`predicted_by_operand`): the reference
lowering rebuilds the call with each operand dtype named and confirms every one fails as
predicted. The findings come from `mmalint check` on two kernels written for the caller's dtype.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings
from mmalint.confirm.signature import FindingsError, parse_findings
from mmalint.engine import check_text
from mmalint.settings import Settings

# The kernels of the recorded GPU run (docs/gpu-runs/2026-11-30-h200/by-operand.md):
# tokamax style, the operand dtype is the caller's and a bfloat16 accumulator fits none; and raw
# Mosaic GPU, the dtype comes from a flag and the accumulator is int16.
KERNELS = Path(__file__).resolve().parents[2] / "benchmarks" / "confirm" / "by_operand"
PALLAS = (KERNELS / "pallas_caller_dtype_bf16_acc.py").read_text(encoding="utf-8")
MGPU = (KERNELS / "raw_flag_dtype_int16_acc.py").read_text(encoding="utf-8")


def found(source: str, version: str) -> dict[str, Any]:
    report = check_text("kernel.py", source, Settings(target_jax=version))
    (diag,) = report.diagnostics
    return diag.to_json()


def test_variants_rebuild_the_call_per_operand_dtype() -> None:
    finding = found(PALLAS, "0.12")
    assert finding["code"] == "MMA102" and finding["predicted_error"] is None
    (parsed,) = parse_findings([finding])
    assert parsed.call is None  # the operands alone leave no call to rebuild
    assert [(v.operand_dtype, v.code) for v in parsed.variants] == [
        ("bfloat16", "MMA102"), ("int8", "MMA101")]
    bf16, int8 = parsed.variants
    assert bf16.call is not None and int8.call is not None
    assert (bf16.call.a.dtype, bf16.call.b.signedness) == ("bfloat16", "signless")
    assert (int8.call.a.dtype, int8.call.b.signedness) == ("int8", "signed")
    assert bf16.call.acc.dtype == "bfloat16"
    assert bf16.predicted.message.startswith("Only float64, float32 and float16 accumulators")
    assert int8.predicted.message.startswith("Only int32 accumulator supported")


@pytest.mark.parametrize("bad", ["boom", [1], [{"operand_dtype": "int8"}],
                                 [{"operand_dtype": "int8", "code": "MMA101"}]])
def test_bad_predicted_by_operand(bad: object) -> None:
    finding = copy.deepcopy(found(PALLAS, "0.12"))
    finding["predicted_by_operand"] = bad
    with pytest.raises(FindingsError, match=r"predicted_by_operand|predicted_error"):
        parse_findings([finding])


def _newer_than_0_10(version: str | None) -> bool:
    return version is not None and tuple(int(p) for p in version.split(".")[:2]) >= (0, 11)


@pytest.mark.jax
def test_jax_tier_confirms_every_operand_dtype(jax_info: tuple[str | None, str | None]) -> None:
    version, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    target = "0.12" if _newer_than_0_10(version) else "0.10"
    findings = [found(MGPU, target)]
    if _newer_than_0_10(version):
        findings.append(found(PALLAS, target))
    verdicts = confirm_findings(findings, {"jax"}, jobs=2, timeout=180)
    for verdict in verdicts:
        assert verdict.verdict == "confirmed", verdict.evidence
        parts = verdict.detail["by_operand"]
        assert [p["operand_dtype"] for p in parts] == ["bfloat16", "int8"]
        assert all(p["verdict"] == "confirmed" for p in parts)
    mgpu = verdicts[0].evidence
    assert "Only f32 accumulator supported for floating operands." in mgpu
    assert "Only s32 accumulator supported for integer operands." in mgpu


@pytest.mark.ptxas
def test_ptx_tier_confirms_every_operand_dtype() -> None:
    verdicts = confirm_findings([found(MGPU, "0.12"), found(PALLAS, "0.12")], {"ptx"})
    for verdict in verdicts:
        assert verdict.verdict == "confirmed", verdict.evidence
    assert "row.col.s16.bf16.bf16.s16" in verdicts[0].evidence
    assert "row.col.bf16.bf16.bf16.bf16" in verdicts[1].evidence

