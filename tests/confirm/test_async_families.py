"""The wgmma (MMA6xx) and tcgen05 (MMA7xx) families in every tier.

The findings are what `mmalint check --output-format json examples/` reports for the
`wgmma_*`/`tcgen05_*` examples (jax 0.10 target), plus an MMA607 and an MMA707 standing in for
rules newer than the reference cases. ptx runs the real ptxas; jax lowers on the CPU with the
installed jax (0.10 and 0.12 give the same verdicts); the gpu tier runs for real only where a
GPU is listed (marker `gpu`), and up to compilation on the CPU (dry run) everywhere else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings, families
from mmalint.confirm.process import worker_env
from mmalint.confirm.protocol import parse_records
from mmalint.confirm.signature import parse_findings

DATA = Path(__file__).parent / "data" / "async_findings.json"
FINDINGS: list[dict[str, Any]] = json.loads(DATA.read_text())


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{Path(finding['filename']).stem}"


KEYS = [key(f) for f in FINDINGS]

# (ptx verdict, a piece of its evidence) per finding.
PTX = {
    "MMA701-tcgen05_pallas_bf16_half_acc": ("inconclusive", "PTX allows this"),
    "MMA702-tcgen05_pallas_f32_linear": ("inconclusive", "kind::tf32"),
    "MMA703-tcgen05_pallas_int8_n_tile": ("inconclusive", "instruction descriptor"),
    "MMA704-tcgen05_pallas_mxfp8_one_scale": ("inconclusive", "tier does not apply"),
    "MMA701-tcgen05_raw_int8_f32_acc": ("inconclusive", "PTX allows this"),
    "MMA705-tcgen05_raw_uint8_histogram": ("inconclusive", "a=u8 b=u8"),
    "MMA601-wgmma_pallas_bf16_half_acc": ("confirmed", "m64n128k16.f16.bf16.bf16"),
    "MMA605-wgmma_pallas_int8_n40": ("confirmed", "Illegal matrix shape '.m64n40k32'"),
    "MMA602-wgmma_pallas_int8_uint32_acc": ("confirmed", ".u32.s8.s8"),
    "MMA603-wgmma_pallas_u8_hamming": ("inconclusive", "s32.u8.u8"),
    "MMA601-wgmma_raw_int8_default_acc": ("confirmed", "f32.s8.s8"),
    "MMA606-wgmma_raw_mixed_halves": ("confirmed", "f32.f16.bf16"),
    "MMA602-wgmma_raw_uint32_counts": ("confirmed", "m64n64k32.u32.s8.s8"),
    "MMA607-wgmma_raw_mixed_halves": ("inconclusive", "no reference case for MMA607"),
    "MMA707-tcgen05_raw_int8_f32_acc": ("inconclusive", "no reference case for MMA707"),
}


def test_families_are_registered() -> None:
    for name, roles, arch in (("wgmma", ("acc", "a", "b"), "sm_90a"),
                              ("tcgen05", ("d", "a", "b"), "sm_100a")):
        family = families.host(name)
        assert family is not None and family.roles == roles and family.ptx_arch == arch


def test_call_reads_roles_memory_spaces_and_options() -> None:
    by_key = dict(zip(KEYS, parse_findings(FINDINGS), strict=True))
    tc = by_key["MMA704-tcgen05_pallas_mxfp8_one_scale"].call
    assert tc is not None and tc.family == "tcgen05" and tc.roles == ("d", "a", "b")
    assert tc.operand("d") is tc.acc and tc.acc.memory_space == "tmem"
    assert tc.b.memory_space == "smem"
    assert tc.option("a_scale") is True and tc.option("b_scale") is False
    wg = by_key["MMA601-wgmma_raw_int8_default_acc"].call
    assert wg is not None and wg.family == "wgmma" and wg.option("swizzle") == 128
    assert wg.acc.memory_space == "registers" and wg.a.memory_space == "smem"


@pytest.mark.ptxas
@pytest.mark.parametrize("finding", FINDINGS, ids=KEYS)
def test_ptx_tier(finding: dict[str, Any]) -> None:
    (v,) = confirm_findings([finding], {"ptx"})
    verdict, evidence = PTX[key(finding)]
    assert v.verdict == verdict, v.evidence
    assert evidence in v.evidence


def _jax_expected(finding: dict[str, Any], version: str) -> tuple[str, str]:
    code = finding["code"]
    if code == "MMA606" and not version.startswith("0.10."):
        # The findings target jax 0.10; from 0.11 the message names the fp8 mix too.
        return "inconclusive", "the finding targets jax 0.10"
    if code in ("MMA607", "MMA707"):
        return "inconclusive", f"no reference case for {code}"
    if code == "MMA605":  # ptxas's error, after jax built it
        return "inconclusive", "m64n40k32.s32.s8.s8"
    if code == "MMA603":
        return "confirmed", "emits wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 where the " \
                            "data needs wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.u8"
    if code == "MMA705":
        return "confirmed", "[idesc d=s32 a=s8 b=s8] where the data needs"
    return "confirmed", finding["predicted_error"]["message"]


@pytest.mark.jax
def test_jax_tier(jax_info: tuple[str | None, str | None]) -> None:
    """Every finding in one run (two workers): the predicted error with the exact message, or
    the silent s8 in the lowered instruction; every fix builds."""
    version, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    verdicts = confirm_findings(FINDINGS, {"jax"}, jobs=2, timeout=300)
    for finding, v in zip(FINDINGS, verdicts, strict=True):
        verdict, evidence = _jax_expected(finding, version or "")
        assert v.verdict == verdict, (key(finding), v.evidence)
        assert evidence in v.evidence, (key(finding), v.evidence)
        if verdict == "confirmed":
            assert "the fix built without error" in v.evidence, v.evidence


def _dry_run(finding: dict[str, Any]) -> dict[str, dict[str, Any]]:
    f = parse_findings([finding])[0]
    assert f.call is not None
    family = families.host(f.call.family)
    assert family is not None
    fixed = family.fixed_call(f.call, f.code)
    case = {"flagged": family.kernel_spec(f.call, f.code).to_json(),
            "fix": family.kernel_spec(fixed, f.code, conform=True).to_json() if fixed else None,
            "seed": 1, "dry_run": True}
    out = subprocess.run([sys.executable, "-m", "mmalint.confirm.gpu_worker"],
                         input=json.dumps(case), capture_output=True, text=True, timeout=300,
                         env=worker_env({"JAX_PLATFORMS": "cpu"}))
    assert out.returncode == 0, out.stderr[-2000:]
    return {r["part"]: r for r in parse_records(out.stdout)}


@pytest.mark.jax
@pytest.mark.parametrize(("name", "fix"), [
    ("MMA603-wgmma_pallas_u8_hamming", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"),
    ("MMA601-wgmma_raw_int8_default_acc", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"),
    ("MMA606-wgmma_raw_mixed_halves", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
    ("MMA705-tcgen05_raw_uint8_histogram", "kind::i8 [idesc d=s32 a=s8 b=s8]"),
    ("MMA701-tcgen05_pallas_bf16_half_acc", "kind::f16 [idesc d=f32 a=bf16 b=bf16]"),
])
def test_gpu_worker_dry_run(name: str, fix: str, jax_info: tuple[str | None, str | None]) -> None:
    """The gpu tier up to compilation, with the same full-range data and arrays."""
    if jax_info[1] is not None:
        pytest.skip(jax_info[1])
    records = _dry_run(next(f for f in FINDINGS if key(f) == name))
    assert records["fix"]["status"] == "lowered", records["fix"]
    assert records["fix"]["has_reference"] is True
    assert any(fix in i for i in records["fix"]["instructions"]), records["fix"]


def test_gpu_tier_without_a_gpu_or_cupy_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmalint.confirm import runner

    finding = next(f for f in FINDINGS if key(f) == "MMA601-wgmma_raw_int8_default_acc")
    monkeypatch.setattr(runner, "gpu_present", lambda: "no GPU (test)")
    (v,) = confirm_findings([finding], {"gpu"})
    assert v.verdict == "inconclusive" and "no GPU" in v.evidence
    monkeypatch.setattr(runner, "gpu_present", lambda: None)
    (v,) = confirm_findings([finding], {"gpu"}, gpu_backend="cupy")
    assert v.verdict == "inconclusive" and "the CuPy path has no wgmma kernel" in v.evidence
    unknown = next(f for f in FINDINGS if f["code"] == "MMA707")
    (v,) = confirm_findings([unknown], {"gpu"})
    assert v.verdict == "inconclusive" and "no reference case for MMA707" in v.evidence


@pytest.mark.jax
def test_tcgen05_on_hopper_says_so(jax_info: tuple[str | None, str | None]) -> None:
    if jax_info[1] is not None:
        pytest.skip(jax_info[1])
    tcgen05 = families.worker_module("tcgen05", "kernels")
    wgmma = families.worker_module("wgmma", "kernels")
    assert tcgen05.device_problem("9.0").startswith(
        "tcgen05 needs a Blackwell (sm_100a) GPU; this GPU is sm 9.0")
    assert tcgen05.device_problem("10.0") is None
    assert wgmma.device_problem("9.0") is None
    assert "Hopper" in wgmma.device_problem("10.0")


def test_gpu_judge_reports_the_device_problem() -> None:
    from mmalint.confirm.judge import WorkerOutcome, judge_gpu

    reason = "tcgen05 needs a Blackwell (sm_100a) GPU; this GPU is sm 9.0"
    outcome = WorkerOutcome(({"part": "unavailable", "backend": "jax", "reason": reason,
                              "compute_capability": "9.0"},), 0, "", False, 60.0)
    judged = judge_gpu("MMA701", None, "0.11", True, outcome)
    assert judged.verdict == "inconclusive" and judged.evidence == reason


# ---------------------------------------------------------------- on a real GPU (H200)

@pytest.mark.gpu
def test_on_the_gpu() -> None:
    """wgmma: every fix matches NumPy, errors as predicted, MMA603's uint8 data (0..255) gives
    wrong sums; tcgen05: the plain "needs a Blackwell GPU" verdict on Hopper."""
    verdicts = confirm_findings(FINDINGS, {"gpu"}, jobs=2, timeout=300, gpu_backend="jax")
    for finding, v in zip(FINDINGS, verdicts, strict=True):
        k = key(finding)
        if finding["code"] in ("MMA607", "MMA707"):
            assert v.verdict == "inconclusive" and "no reference case" in v.evidence
        elif k.startswith("MMA7") and "sm 9.0" in v.evidence:
            assert v.verdict == "inconclusive" and "needs a Blackwell" in v.evidence
        elif finding["code"] == "MMA605":
            assert v.verdict == "inconclusive", v.evidence
        else:
            assert v.verdict == "confirmed", (k, v.evidence)
        if finding["code"] == "MMA603" and v.verdict == "confirmed":
            assert dict(v.detail)["flagged"]["max_abs_error"] > 1000
            assert dict(v.detail)["fix"]["exact"] is True


def test_a_gpu_without_the_instruction_is_reported_unavailable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On an H200 the tcgen05 worker says the GPU cannot run it: its record is `unavailable`
    (the environment's own `part: env` must not override that, as it once did, which left the
    judge waiting for a fix record that never came)."""
    import io

    from mmalint.confirm import gpu_worker

    finding = next(f for f in FINDINGS if f["call"]["family"] == "tcgen05")
    spec = {"family": "tcgen05", "api": finding["call"]["api"]}
    case = {"gpu_backend": "jax", "flagged": spec, "fix": spec}
    monkeypatch.setattr(gpu_worker, "jax_environment", lambda: {
        "part": "env", "backend": "jax", "jax_version": "0.11.2", "device": "NVIDIA H200",
        "compute_capability": "9.0"})
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(case)))
    assert gpu_worker.main() == 0
    records = parse_records(capsys.readouterr().out)
    assert [r["part"] for r in records] == ["unavailable"]
    assert "tcgen05 needs a Blackwell (sm_100a) GPU; this GPU is sm 9.0" in records[0]["reason"]
