"""Verdict rules for the jax and gpu tiers, on worker records (no processes, no jax)."""

from __future__ import annotations

from typing import Any

from mmalint.confirm.judge import WorkerOutcome, judge_gpu, judge_jax
from mmalint.confirm.signature import PredictedError

PRED = PredictedError("NotImplementedError",
                      "Only s32 accumulator supported for integer operands.", "0.11")
RIGHT = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
WRONG = "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"


def outcome(*records: dict[str, Any], returncode: int = 0, timed_out: bool = False,
            stderr: str = "") -> WorkerOutcome:
    return WorkerOutcome(tuple(records), returncode, stderr, timed_out, 30.0)


def env(version: str = "0.11.2", **extra: Any) -> dict[str, Any]:
    return {"part": "env", "jax_version": version, **extra}


def raised(part: str, exc: str = PRED.exception, msg: str = PRED.message) -> dict[str, Any]:
    return {"part": part, "status": "raised", "exception": exc, "message": msg}


def built(part: str, *instructions: str) -> dict[str, Any]:
    return {"part": part, "status": "built", "instructions": list(instructions)}


def ran(part: str, within: bool, err: float = 0.0) -> dict[str, Any]:
    return {"part": part, "status": "ran", "within": within, "exact": within,
            "max_abs_error": err, "comparison": "bit-exact against NumPy" if within
            else f"differs from NumPy: max abs error {err}"}


def test_jax_confirmed_and_not_reproduced() -> None:
    j = judge_jax("MMA101", PRED, "0.11", RIGHT,
                  outcome(env(), raised("flagged"), built("fix", RIGHT)))
    assert j.verdict == "confirmed" and PRED.message in j.evidence and RIGHT in j.evidence
    j = judge_jax("MMA101", PRED, "0.11", RIGHT, outcome(env(), built("flagged", RIGHT)))
    assert j.verdict == "not reproduced" and "built without error" in j.evidence
    j = judge_jax("MMA101", PRED, "0.11", RIGHT,
                  outcome(env(), raised("flagged", "ValueError", "other")))
    assert j.verdict == "not reproduced" and "ValueError: other" in j.evidence


def test_jax_other_version_is_inconclusive() -> None:
    j = judge_jax("MMA104", PRED, "0.11", RIGHT,
                  outcome(env("0.10.2"), raised("flagged", "ValueError", "not canonical")))
    assert j.verdict == "inconclusive" and "targets jax 0.11" in j.evidence
    # ...but a match is a match whatever the version.
    j = judge_jax("MMA101", PRED, "0.11", RIGHT, outcome(env("0.12.0.1"), raised("flagged")))
    assert j.verdict == "confirmed"


def test_jax_silent() -> None:
    j = judge_jax("MMA203", None, "0.11", RIGHT,
                  outcome(env(), built("flagged", WRONG), built("fix", RIGHT)))
    assert j.verdict == "confirmed" and WRONG in j.evidence and RIGHT in j.evidence
    j = judge_jax("MMA203", None, "0.11", RIGHT, outcome(env(), built("flagged", RIGHT)))
    assert j.verdict == "not reproduced"
    j = judge_jax("MMA203", None, "0.11", RIGHT, outcome(env(), raised("flagged")))
    assert j.verdict == "not reproduced" and "expected a silent build" in j.evidence
    j = judge_jax("MMA203", None, "0.11", RIGHT, outcome(env(), built("flagged")))
    assert j.verdict == "inconclusive"


def test_jax_unavailable_and_crashes() -> None:
    j = judge_jax("MMA101", PRED, "0.11", RIGHT, outcome(
        {"part": "unavailable", "reason": "jax 0.10 has no plgpu.mma"}))
    assert (j.verdict, j.evidence) == ("inconclusive", "jax 0.10 has no plgpu.mma")
    j = judge_jax("MMA101", PRED, "0.11", RIGHT, outcome(timed_out=True, returncode=-9))
    assert j.verdict == "inconclusive" and "timed out after 30 s" in j.evidence
    j = judge_jax("MMA101", PRED, "0.11", RIGHT,
                  outcome(env(), returncode=-11, stderr="Fatal Python error: Segfault\n"))
    assert "signal 11" in j.evidence and "Segfault" in j.evidence


def test_gpu_error_codes() -> None:
    gpu = env(backend="jax", device="NVIDIA H200", compute_capability="9.0")
    j = judge_gpu("MMA101", PRED, "0.11", True, outcome(gpu, ran("fix", True), raised("flagged")))
    assert j.verdict == "confirmed" and "NVIDIA H200" in j.evidence and "bit-exact" in j.evidence
    j = judge_gpu("MMA101", PRED, "0.11", True,
                  outcome(gpu, ran("fix", True), ran("flagged", True)))
    assert j.verdict == "not reproduced" and "ran without error" in j.evidence
    j = judge_gpu("MMA101", PRED, "0.11", True,
                  outcome(gpu, ran("fix", False, 3.0), raised("flagged")))
    assert j.verdict == "inconclusive" and "the fix did not match NumPy" in j.evidence
    j = judge_gpu("MMA101", PRED, "0.11", True,
                  outcome(gpu, ran("fix", True), returncode=-6))
    assert j.verdict == "inconclusive" and "no result for the flagged kernel" in j.evidence


def test_gpu_silent_codes() -> None:
    gpu = env(backend="jax", device="NVIDIA H200", compute_capability="9.0")
    j = judge_gpu("MMA204", None, "0.11", True,
                  outcome(gpu, ran("fix", True), ran("flagged", False, 2.7e6)))
    assert j.verdict == "confirmed" and "2700000" in j.evidence
    j = judge_gpu("MMA204", None, "0.11", True,
                  outcome(gpu, ran("fix", True), ran("flagged", True)))
    assert j.verdict == "not reproduced"


def test_gpu_cupy_backend() -> None:
    gpu = {"part": "env", "backend": "cupy", "device": "NVIDIA H200", "compute_capability": "9.0"}
    flagged = {"part": "flagged", "status": "raised", "exception": "CompileException",
               "message": "error: Unexpected instruction types specified for 'mma'",
               "instruction": "mma.sync.aligned.m16n8k32.row.col.f32.s8.s8.f32"}
    j = judge_gpu("MMA101", PRED, "0.11", True, outcome(gpu, ran("fix", True), flagged))
    assert j.verdict == "confirmed" and "does not compile" in j.evidence
    j = judge_gpu("MMA102", PRED, "0.11", True,
                  outcome(gpu, ran("fix", True), {**ran("flagged", True),
                                                  "instruction": "x"}))
    assert j.verdict == "inconclusive" and "PTX allows this" in j.evidence


def test_gpu_unavailable() -> None:
    j = judge_gpu("MMA101", PRED, "0.11", True,
                  outcome({"part": "unavailable", "reason": "no GPU: cupy not importable"}))
    assert (j.verdict, j.evidence) == ("inconclusive", "no GPU: cupy not importable")


def test_harness_errors_are_never_results() -> None:
    bug = {**raised("flagged", "ModuleNotFoundError", "No module named 'x'"), "harness": True}
    j = judge_jax("MMA101", PRED, "0.11", RIGHT, outcome(env(), bug))
    assert j.verdict == "inconclusive" and "bug in mmalint confirm" in j.evidence
    j = judge_gpu("MMA101", PRED, "0.11", True, outcome(env(backend="jax"), ran("fix", True),
                                                        bug))
    assert j.verdict == "inconclusive" and "bug in mmalint confirm" in j.evidence


def test_describe_exception_marks_harness_bugs() -> None:
    from mmalint.confirm.families.mma.fixes import _retyped
    from mmalint.confirm.protocol import describe_exception
    from mmalint.confirm.signature import Operand

    try:
        _retyped(Operand(), "no-such-dtype")
    except KeyError as e:
        record = describe_exception(e)
    assert record["harness"] is True and record["exception"] == "KeyError"
    try:
        raise ValueError("Dtype mismatch: i8 != i4")
    except ValueError as e:
        record = describe_exception(e)
    assert "harness" not in record and record["message"] == "Dtype mismatch: i8 != i4"


def test_a_ptxas_only_rule_is_confirmed_by_the_compile_failing_on_the_gpu() -> None:
    # MMA605 (integer wgmma N that ptxas rejects): jax raises nothing in Python; on the H200 the
    # flagged kernel's compile failed in ptxas and the fix ran. A run without error proves
    # nothing (ptxas may reject it only for another target): inconclusive, never refuted.
    gpu = env(backend="jax", device="NVIDIA H200", compute_capability="9.0")
    failed = raised("flagged", "JaxRuntimeError", "INTERNAL: Pass pipeline failed")
    j = judge_gpu("MMA605", None, "0.11", True, outcome(gpu, ran("fix", True), failed))
    assert j.verdict == "confirmed" and "failed in ptxas" in j.evidence
    j = judge_gpu("MMA605", None, "0.11", True, outcome(gpu, ran("fix", True), ran("flagged", True)))
    assert j.verdict == "inconclusive" and "no predicted error" in j.evidence
    # A rule jax does check is never confirmed by a compile failure.
    j = judge_gpu("MMA101", None, "0.11", True, outcome(gpu, ran("fix", True), failed))
    assert j.verdict != "confirmed"
