"""The reference cases of the K and scale-shape rules: MMA612 (wgmma K against the swizzle),
MMA716 (tcgen05 K group), MMA717 (jax 0.10's block-scaled N) and MMA718 (A's scale columns).

`kmult_findings.json` holds what `mmalint check --format json` reports for the examples
(`wgmma_pallas_lora_rank32`, `tcgen05_pallas_wgrad_32_tokens`, `tcgen05_pallas_mxfp8_n48_jax010`,
`tcgen05_pallas_mxfp8_scale_block16`) and for the Mosaic GPU rule examples kept in
`kmult_sources/`, targeting jax 0.10, plus MMA718 and MMA612 targeting jax 0.12. The jax tier
runs each on the CPU with the installed jax: a finding of its own jax (0.11 and 0.12 share the
messages) is confirmed with the exact message and a fix that builds; one whose message differs
there is inconclusive and says so. The gpu tier runs the wgmma fixes up to compilation (dry run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _dry_runs import dry_run

from mmalint.confirm import confirm_findings, families
from mmalint.confirm.signature import parse_findings

DATA = Path(__file__).parent / "data" / "kmult_findings.json"
FINDINGS: list[dict[str, Any]] = json.loads(DATA.read_text())


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{Path(finding['filename']).stem}-{finding['call']['target_jax']}"


KEYS = [key(f) for f in FINDINGS]


def _same_messages(target: str, installed: str) -> bool:
    """Whether jax `installed` raises what a finding for jax `target` predicts (0.11 = 0.12)."""
    def line(v: str) -> str:
        return "0.10" if v.startswith("0.10") else "0.11+"
    return line(target) == line(installed)


def test_the_data_is_the_new_codes() -> None:
    assert sorted({f["code"] for f in FINDINGS}) == ["MMA612", "MMA716", "MMA717", "MMA718"]
    for name, codes in (("wgmma", {"MMA612"}), ("tcgen05", {"MMA716", "MMA717", "MMA718"})):
        family = families.host(name)
        assert family is not None and family.reference_codes is not None
        assert codes <= family.reference_codes


@pytest.mark.ptxas
@pytest.mark.parametrize("finding", FINDINGS, ids=KEYS)
def test_ptx_tier_says_why_it_cannot_show_them(finding: dict[str, Any]) -> None:
    (v,) = confirm_findings([finding], {"ptx"})
    assert v.verdict == "inconclusive", v.evidence
    assert "tier does not apply" in v.evidence or "PTX allows" in v.evidence, v.evidence


@pytest.mark.jax
def test_jax_tier(jax_info: tuple[str | None, str | None]) -> None:
    version, problem = jax_info
    if problem is not None or version is None:
        pytest.skip(problem or "jax is not installed")
    verdicts = confirm_findings(FINDINGS, {"jax"}, jobs=2, timeout=300)
    for finding, v in zip(FINDINGS, verdicts, strict=True):
        predicted = finding["predicted_error"]
        target = finding["call"]["target_jax"]
        if finding["code"] in ("MMA612", "MMA716") or _same_messages(target, version):
            assert v.verdict == "confirmed", (key(finding), v.evidence)
            assert f"raised {predicted['exception']}: {predicted['message']} (at " in v.evidence
            assert "the fix built without error" in v.evidence, v.evidence
        else:
            assert v.verdict == "inconclusive", (key(finding), v.evidence)
            assert f"jax {version}" in v.evidence, v.evidence


def test_fixes_from_the_call_data() -> None:
    calls = {key(f): p.call for f, p in zip(FINDINGS, parse_findings(FINDINGS), strict=True)}
    wgmma, tcgen05 = families.host("wgmma"), families.host("tcgen05")
    assert wgmma is not None and tcgen05 is not None
    lora = calls["MMA612-wgmma_pallas_lora_rank32-0.10"]
    assert lora is not None and lora.b.swizzle == 128 and lora.a.memory_space == "registers"
    spec = wgmma.kernel_spec(lora, "MMA612").to_json()
    assert spec["b_swizzle"] == 128 and spec["a_untiled"] is True
    assert [v["transposed"] for v in spec["values"]] == [False, False, False]  # B N-major
    fixed = wgmma.fixed_call(lora, "MMA612")
    assert fixed is not None and fixed.b.swizzle == 64
    assert wgmma.kernel_spec(fixed, "MMA612", conform=True).to_json()["b_swizzle"] == 64
    raw = calls["MMA612-wgmma_raw_k32_rule_example-0.10"]
    assert raw is not None
    fixed_raw = wgmma.fixed_call(raw, "MMA612")
    assert fixed_raw is not None and fixed_raw.option("swizzle") == 64
    wgrad = calls["MMA716-tcgen05_pallas_wgrad_32_tokens-0.10"]
    assert wgrad is not None
    spec = tcgen05.kernel_spec(wgrad, "MMA716").to_json()
    assert (spec["a_swizzle"], spec["b_swizzle"]) == (128, 128)
    assert [v["transposed"] for v in spec["values"]] == [False, True, False]  # A M-major
    fixed = tcgen05.fixed_call(wgrad, "MMA716")
    assert fixed is not None and (fixed.a.swizzle, fixed.b.swizzle) == (64, 64)
    staged = calls["MMA716-tcgen05_raw_swizzle_default_rule_example-0.10"]
    assert staged is not None
    spec = tcgen05.kernel_spec(staged, "MMA716").to_json()
    assert (spec["a_swizzle"], spec["a_copy_swizzle"]) == (128, 64)
    fixed = tcgen05.fixed_call(staged, "MMA716")
    assert fixed is not None and (fixed.option("a_swizzle"), fixed.option("b_swizzle")) == (64, 64)
    router = calls["MMA717-tcgen05_pallas_mxfp8_n48_jax010-0.10"]
    assert router is not None
    fixed = tcgen05.fixed_call(router, "MMA717")
    assert fixed is not None and fixed.acc.shape == (128, 64)
    assert tcgen05.kernel_spec(router, "MMA717").to_json()["b_scale_shape"] == [128, 8]
    block16 = calls["MMA718-tcgen05_pallas_mxfp8_scale_block16-0.12"]
    assert block16 is not None
    assert tcgen05.kernel_spec(block16, "MMA718").to_json()["a_scale_shape"] == [128, 16]
    fixed = tcgen05.fixed_call(block16, "MMA718")
    assert fixed is not None
    assert tcgen05.kernel_spec(fixed, "MMA718").to_json()["a_scale_shape"] == [128, 8]


@pytest.mark.jax
@pytest.mark.parametrize(("name", "fix"), [
    ("MMA612-wgmma_pallas_lora_rank32-0.10", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
    ("MMA612-wgmma_pallas_lora_rank32-0.12", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
    ("MMA612-wgmma_raw_k32_rule_example-0.10", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
])
def test_gpu_worker_dry_run_of_the_wgmma_fix(name: str, fix: str,
                                             jax_info: tuple[str | None, str | None]) -> None:
    """The gpu tier up to compilation: the fixed MMA612 kernel (K = 32, a 64-byte swizzle, B
    N-major, A in registers) lowers with full-range data and a NumPy reference."""
    if jax_info[1] is not None:
        pytest.skip(jax_info[1])
    records = dry_run(needs_fix=True, finding=next(f for f in FINDINGS if key(f) == name))
    assert records["flagged"]["status"] != "lowered", records["flagged"]
    assert records["fix"]["status"] == "lowered", records["fix"]
    assert records["fix"]["has_reference"] is True
    assert any(fix in i for i in records["fix"]["instructions"]), records["fix"]


@pytest.mark.gpu
def test_the_wgmma_fixes_on_the_gpu() -> None:
    """On an H200: MMA612 raises as predicted and its fix matches NumPy."""
    wgmma = [f for f in FINDINGS if f["code"] == "MMA612"]
    verdicts = confirm_findings(wgmma, {"gpu"}, jobs=1, timeout=300, gpu_backend="jax")
    for finding, v in zip(wgmma, verdicts, strict=True):
        assert v.verdict == "confirmed", (key(finding), v.evidence)
