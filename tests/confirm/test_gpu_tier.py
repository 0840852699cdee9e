"""The gpu tier on a real GPU (marker `gpu`; skipped where nvidia-smi lists no GPU), and its
CuPy path end to end on any machine through a NumPy emulation of CuPy (`fake_cupy/`).

On a GPU each backend runs every fixture once (module-scoped, spread over the machine's cores
and GPUs); the tests then check one fixture each.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings
from mmalint.confirm.verdict import Verdict

JOBS = min(os.cpu_count() or 1, 8)


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{finding['call']['api']}-{Path(finding['filename']).stem}"


# jax backend: every finding whose mistake jax reports is confirmed (the flagged kernel raises
# the predicted error, or silently computes wrong numbers, and its fix matches NumPy).
JAX_EXPECTED = {
    "MMA502-mgpu.mma-raw_fp8_sm80": ("inconclusive", "no predicted error to compare"),
}
# cupy backend: it runs the instruction, not jax, so it confirms what the hardware lacks and
# says "PTX allows this" where only Mosaic refuses.
CUPY_EXPECTED = {
    "MMA101-mgpu.mma-raw_int8_f32_acc": "confirmed",
    "MMA102-mgpu.mma-raw_bf16_f16_acc": "confirmed",
    "MMA102-mgpu.mma-raw_f16_f16_acc": "inconclusive",
    "MMA103-mgpu.mma-raw_i8_i4_mix": "confirmed",
    "MMA104-mgpu.mma-raw_f32_operands": "confirmed",
    "MMA105-mgpu.mma-raw_acc_last": "confirmed",
    "MMA201-mgpu.mma-raw_unsigned_acc": "confirmed",
    "MMA202-mgpu.mma-raw_missing_is_signed": "inconclusive",
    "MMA203-mgpu.mma-raw_int8_as_unsigned": "confirmed",
    "MMA502-mgpu.mma-raw_fp8_sm80": "inconclusive",
    "MMA101-plgpu.mma-pallas_int8_f32_acc": "confirmed",
    "MMA102-plgpu.mma-pallas_bf16_f16_acc": "confirmed",
    "MMA103-plgpu.mma-pallas_i8_u8_mix": "inconclusive",
    "MMA104-plgpu.mma-pallas_f32_operands": "confirmed",
    "MMA105-plgpu.mma-pallas_acc_last": "confirmed",
    "MMA201-plgpu.mma-pallas_uint32_acc": "confirmed",
    "MMA204-plgpu.mma-pallas_uint8_warpgroup": "confirmed",
}


def _by_key(findings: list[dict[str, Any]], verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {key(findings[v.index]): v for v in verdicts}


@pytest.fixture(scope="module")
def jax_verdicts(findings: list[dict[str, Any]]) -> dict[str, Verdict]:
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    return _by_key(findings, confirm_findings(findings, {"gpu"}, jobs=JOBS, timeout=300,
                                              gpu_backend="jax"))


@pytest.fixture(scope="module")
def cupy_verdicts(findings: list[dict[str, Any]]) -> dict[str, Verdict]:
    if importlib.util.find_spec("cupy") is None:
        pytest.skip("cupy is not installed")
    return _by_key(findings, confirm_findings(findings, {"gpu"}, jobs=JOBS, timeout=300,
                                              gpu_backend="cupy"))


@pytest.mark.gpu
def test_jax_backend(fixture_finding: dict[str, Any], jax_verdicts: dict[str, Verdict]) -> None:
    v = jax_verdicts[key(fixture_finding)]
    if "has no plgpu.mma" in v.evidence:
        pytest.skip(v.evidence)
    want, evidence = JAX_EXPECTED.get(key(fixture_finding), ("confirmed", ""))
    assert v.verdict == want, v.evidence
    assert evidence in v.evidence
    if want == "confirmed":
        assert "the fix is" in v.evidence and dict(v.detail)["fix"]["within"] is True
    if fixture_finding["code"] in ("MMA203", "MMA204"):
        assert dict(v.detail)["flagged"]["max_abs_error"] > 0


@pytest.mark.gpu
def test_cupy_backend(fixture_finding: dict[str, Any],
                      cupy_verdicts: dict[str, Verdict]) -> None:
    v = cupy_verdicts[key(fixture_finding)]
    assert v.verdict == CUPY_EXPECTED[key(fixture_finding)], v.evidence


@pytest.mark.gpu
def test_false_findings_not_reproduced(false_findings: list[dict[str, Any]]) -> None:
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    verdicts = confirm_findings(false_findings[:2], {"gpu"}, jobs=2, timeout=300,
                                gpu_backend="jax")
    assert [v.verdict for v in verdicts] == ["not reproduced", "not reproduced"], [
        v.evidence for v in verdicts]


@pytest.mark.gpu
def test_devices_are_spread(findings: list[dict[str, Any]]) -> None:
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    if sum(line.startswith("GPU ") for line in listed.stdout.splitlines()) < 2:
        pytest.skip("needs two GPUs")
    verdicts = confirm_findings(findings[:4], {"gpu"}, jobs=4, devices=[0, 1], timeout=300)
    assert {dict(v.detail).get("cuda_visible_devices") for v in verdicts} == {0, 1}


@pytest.mark.ptxas
def test_cupy_path_emulated(fixture_finding: dict[str, Any],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole CuPy path (instruction, CUDA source, packing, launch, unpacking, NumPy
    comparison, verdict) against an emulated GPU whose compiler is the real ptxas."""
    from mmalint.confirm import runner

    monkeypatch.setattr(runner, "gpu_present", lambda: None)
    # Workers run isolated and ignore PYTHONPATH: the emulation comes in as a trusted path.
    fake = Path(__file__).parent / "fake_cupy"
    (v,) = confirm_findings([fixture_finding], {"gpu"}, timeout=120, gpu_backend="cupy",
                            worker_path=[str(fake)])
    assert v.verdict == CUPY_EXPECTED[key(fixture_finding)], v.evidence
    assert "Fake GPU" in v.evidence or v.verdict == "inconclusive"
    if v.verdict == "confirmed" and fixture_finding["code"] in ("MMA203", "MMA204"):
        assert dict(v.detail)["flagged"]["max_abs_error"] > 1000
        assert dict(v.detail)["fix"]["exact"] is True
