"""The reference cases of the rules about A in TMEM (MMA713-715), in the CPU tiers.

The findings of data/tmem_a_findings.json were made by the real analyzer (see
data/make_tmem_a_findings.py): the invalid rule examples of MMA713-715, their examples/ files
and the kernels in data/tmem_a_sources/, each checked for jax 0.10 and 0.12 (MMA715's dense
block-scaled case for 0.10 only). The jax tier rebuilds each call with A in TMEM as the program
allocated it (packing, collectiveness), and each fix (A in SMEM; A's TMEM fully packed and
collective), on the CPU with the installed jax.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings, families
from mmalint.confirm.signature import parse_findings

DATA = Path(__file__).parent / "data" / "tmem_a_findings.json"
FINDINGS: list[dict[str, Any]] = json.loads(DATA.read_text())


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{Path(finding['filename']).stem}-jax{finding['call']['target_jax']}"


KEYS = [key(f) for f in FINDINGS]


def test_the_data_covers_every_rule_api_and_version() -> None:
    seen = {(f["code"], f["call"]["api"], f["call"]["target_jax"]) for f in FINDINGS}
    for code in ("MMA713", "MMA714", "MMA715"):
        for api in ("mgpu.tcgen05.mma", "plgpu.tcgen05_mma"):
            if code == "MMA715" and api == "mgpu.tcgen05.mma":
                continue  # MMA715 is shown through Pallas, which calls the same mma()
            assert (code, api, "0.10") in seen and (code, api, "0.12") in seen, (code, api)


def test_the_signature_carries_a_in_tmem() -> None:
    by_key = dict(zip(KEYS, parse_findings(FINDINGS), strict=True))
    raw = by_key["MMA714-tcgen05_raw_tmem_lhs_unpacked-jax0.12"].call
    assert raw is not None and raw.a.memory_space == "tmem" and raw.a.tmem_packing == 1
    collective = by_key["MMA714-pallas_collective_a_not_collective-jax0.12"].call
    assert collective is not None and collective.a.tmem_collective is False
    assert collective.acc.tmem_collective is True and collective.option("collective") is True


def test_each_fix_is_the_rule_s() -> None:
    family = families.host("tcgen05")
    assert family is not None
    by_key = dict(zip(KEYS, parse_findings(FINDINGS), strict=True))
    for name, check in (
        ("MMA713-tcgen05_pallas_tmem_lhs_m64-jax0.12", lambda c: c.a.memory_space == "smem"),
        ("MMA715-tcgen05_pallas_sparse_mxfp8_tmem_lhs-jax0.12",
         lambda c: c.a.memory_space == "smem" and c.option("sparse") and c.option("a_scale")),
        ("MMA714-tcgen05_raw_tmem_lhs_unpacked-jax0.12", lambda c: c.a.tmem_packing == 2),
        ("MMA714-mgpu_fp8_packing_2-jax0.12", lambda c: c.a.tmem_packing == 4),
        ("MMA714-pallas_collective_a_not_collective-jax0.12", lambda c: c.a.tmem_collective is True),
    ):
        call = by_key[name].call
        assert call is not None
        fixed = family.fixed_call(call, by_key[name].code)
        assert fixed is not None and check(fixed), name


@pytest.mark.parametrize("finding", FINDINGS[:3], ids=KEYS[:3])
def test_the_ptx_tier_does_not_apply(finding: dict[str, Any]) -> None:
    (v,) = confirm_findings([finding], {"ptx"})
    assert v.verdict == "inconclusive" and "tier does not apply" in v.evidence


@pytest.mark.jax
def test_jax_tier(jax_info: tuple[str | None, str | None]) -> None:
    """Each finding for the installed jax: confirmed (the predicted exception and message,
    verbatim), and its fix builds. For another version: never "not reproduced"."""
    version, problem = jax_info
    if problem is not None or version is None:
        pytest.skip(problem or "jax is not installed")
    installed = ".".join(version.split(".")[:2])
    verdicts = confirm_findings(FINDINGS, {"jax"}, jobs=2, timeout=300)
    mine = 0
    for finding, v in zip(FINDINGS, verdicts, strict=True):
        if finding["call"]["target_jax"] == installed:
            mine += 1
            assert v.verdict == "confirmed", (key(finding), v.evidence)
            assert finding["predicted_error"]["message"] in v.evidence
            assert "the fix built without error" in v.evidence, (key(finding), v.evidence)
        else:
            assert v.verdict in ("confirmed", "inconclusive"), (key(finding), v.evidence)
    if installed in ("0.10", "0.12"):
        assert mine >= 11
