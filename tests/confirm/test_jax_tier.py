"""The jax tier with the installed jax (marker `jax`), and the GPU worker's jax path run on the
CPU up to compilation (a "dry run": data, arrays, kernel build and CUDA lowering)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _dry_runs import dry_run

from mmalint.confirm import confirm_findings
from mmalint.confirm.process import worker_env
from mmalint.confirm.verdict import Verdict

pytestmark = pytest.mark.jax


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{finding['call']['api']}-{Path(finding['filename']).stem}"


def minor(version: str) -> tuple[int, int]:
    major, minor_, *_ = version.split(".")
    return int(major), int(minor_)


def expected(finding: dict[str, Any], version: str, problem: str | None) -> tuple[str, str]:
    """The verdict and a piece of its evidence, for this jax version."""
    k = key(finding)
    if problem is not None:
        return "inconclusive", "cannot import Mosaic GPU"
    if finding["call"]["api"] == "plgpu.mma" and minor(version) < (0, 11):
        return "inconclusive", "has no plgpu.mma"
    if k == "MMA502-mgpu.mma-raw_fp8_sm80":
        return "inconclusive", "no predicted error to compare"
    if k == "MMA104-mgpu.mma-raw_f32_operands" and minor(version) < (0, 11):
        # jax 0.10 stops earlier: MMALayouts(f32) is "not canonical" (mma-facts §2.1).
        return "inconclusive", "is not canonical"
    if finding["code"] in ("MMA203", "MMA204"):
        return "confirmed", "built without error"
    return "confirmed", finding["predicted_error"]["message"]


@pytest.fixture(scope="module")
def fixture_verdicts(findings: list[dict[str, Any]]) -> list[Verdict]:
    """The jax tier's verdict on every finding of data/findings.json, in one run (one fork
    server per thread imports jax, not one process per finding)."""
    return confirm_findings(findings, {"jax"}, jobs=2, timeout=120)


def test_fixture_verdicts(fixture_finding: dict[str, Any], findings: list[dict[str, Any]],
                          fixture_verdicts: list[Verdict],
                          jax_info: tuple[str | None, str | None]) -> None:
    version, problem = jax_info
    assert version is not None
    verdict = fixture_verdicts[findings.index(fixture_finding)]
    assert verdict.index == findings.index(fixture_finding)
    want, evidence = expected(fixture_finding, version, problem)
    assert (verdict.verdict, verdict.tier) == (want, "jax"), verdict.evidence
    assert evidence in verdict.evidence


def test_false_findings(false_findings: list[dict[str, Any]],
                        jax_info: tuple[str | None, str | None]) -> None:
    version, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    assert version is not None
    verdicts = confirm_findings(false_findings, {"jax"}, jobs=2, timeout=120)
    assert [v.verdict for v in verdicts[:2]] == ["not reproduced", "not reproduced"]
    assert "built without error" in verdicts[0].evidence
    assert "which is what the data needs" in verdicts[1].evidence
    if minor(version) >= (0, 11):
        assert verdicts[2].verdict == "not reproduced"
        assert "Got float32" in verdicts[2].evidence and "Got f32" in verdicts[2].evidence


@pytest.mark.parametrize(("name", "flagged", "fix"), [
    ("MMA101-mgpu.mma-raw_int8_f32_acc", "raised", "s32.s8.s8.s32"),
    ("MMA203-mgpu.mma-raw_int8_as_unsigned", "s32.u8.u8.s32", "s32.s8.s8.s32"),
    ("MMA104-mgpu.mma-raw_f32_operands", "raised", "f32.bf16.bf16.f32"),
    ("MMA105-mgpu.mma-raw_acc_last", "raised", "s32.s8.s8.s32"),
    ("MMA204-plgpu.mma-pallas_uint8_warpgroup", "s32.s8.s8.s32", "s32.u8.u8.s32"),
    ("MMA102-plgpu.mma-pallas_bf16_f16_acc", "raised", "f32.bf16.bf16.f32"),
])
def test_gpu_worker_dry_run(findings: list[dict[str, Any]], name: str, flagged: str,
                            fix: str, jax_info: tuple[str | None, str | None]) -> None:
    """Everything the GPU tier does before compiling, with the same data and arrays."""
    version, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    finding = next(f for f in findings if key(f) == name)
    assert version is not None
    if finding["call"]["api"] == "plgpu.mma" and minor(version) < (0, 11):
        pytest.skip(f"jax {version} has no plgpu.mma")
    records = dry_run(finding)
    assert records["env"]["backend"] == "jax"
    assert records["fix"]["status"] == "lowered", records["fix"]
    assert records["fix"]["has_reference"] is True
    assert records["fix"]["instructions"] == [f"mma.sync.aligned.m16n8k{_k(fix)}.row.col.{fix}"]
    if flagged == "raised":
        assert records["flagged"]["status"] == "raised"
        verdict, evidence = expected(finding, version, problem)
        want = finding["predicted_error"]["message"] if verdict == "confirmed" else evidence
        assert want in records["flagged"]["message"]
    else:
        assert records["flagged"]["instructions"] == [
            f"mma.sync.aligned.m16n8k{_k(flagged)}.row.col.{flagged}"]


def _k(types: str) -> int:
    return {"s8": 32, "u8": 32, "bf16": 16, "f16": 16}[types.split(".")[1]]


def test_worker_env_drops_loader_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    monkeypatch.setenv("PYTHONSTARTUP", "/somewhere/else/startup.py")
    env = worker_env({"X": "1"})
    assert "PYTHONPATH" not in env and "PYTHONSTARTUP" not in env
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and env["X"] == "1"
