"""Layouts, shapes and targets (MMA301-305, MMA401-402, MMA501): faithful reproductions.

The findings of data/layout_findings.json were made by the real analyzer (see
data/make_layout_findings.py). The jax tier must rebuild each call as the program builds it:
operands loaded from memory when the signature says `loaded` (B through a transposed view),
built in the layout they were converted from and then relaid out (`converted_from`), and in
the program's order (the creation rows of the `related` notes). MMA501 has no call: the API the
finding names is probed with the installed jax.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings
from mmalint.confirm.availability import probe_for
from mmalint.confirm.families.mma.cases import kernel_spec
from mmalint.confirm.families.mma.fixes import FIX_DESCRIPTIONS, fixed_call, largest_m_warps
from mmalint.confirm.process import worker_env
from mmalint.confirm.protocol import parse_records
from mmalint.confirm.signature import Call, Finding, creation_order, parse_findings
from mmalint.confirm.verdict import Verdict

DATA = Path(__file__).parent / "data" / "layout_findings.json"
RAW: list[dict[str, Any]] = json.loads(DATA.read_text())


def name(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{Path(finding['filename']).stem}"


BY_NAME = {name(f): f for f in RAW}


def parsed(key: str) -> Finding:
    (finding,) = parse_findings([BY_NAME[key]])
    return finding


def call_of(key: str) -> Call:
    call = parsed(key).call
    assert call is not None
    return call


def test_fixtures_cover_the_new_codes() -> None:
    assert set(BY_NAME) == {
        "MMA301-mma301_0", "MMA301-mma301_2", "MMA301-mgpu_mma_result_as_lhs",
        "MMA302-mma302_0", "MMA302-mgpu_b_loaded_with_lhs_layout", "MMA303-mma303_0",
        "MMA304-mma304_0", "MMA305-mma305_0", "MMA305-pallas_lane_operand_m_warps",
        "MMA401-mma401_0", "MMA401-mma401_2", "MMA402-mma402_0",
        "MMA402-mgpu_acc_built_first_tiling", "MMA501-mma501_0", "MMA501-mma401_2",
        "MMA501-mma501_2",
    }
    for code in ("MMA301", "MMA302", "MMA303", "MMA304", "MMA305", "MMA401", "MMA402"):
        assert code in FIX_DESCRIPTIONS


# ---------------------------------------------------------------- the signature

def test_converted_from_is_read() -> None:
    a = call_of("MMA301-mma301_2").a
    assert a.source == "converted" and a.layout.kind == "mma_lhs"
    assert a.converted_from is not None and a.converted_from.kind == "mma_acc"
    assert a.to_json()["converted_from"]["kind"] == "mma_acc"
    assert call_of("MMA301-mma301_0").a.converted_from is None


@pytest.mark.parametrize(("key", "order"), [
    ("MMA402-mma402_0", ("a", "acc", "b")),  # b is not in the notes: last
    ("MMA402-mgpu_acc_built_first_tiling", ("acc", "a", "b")),
    ("MMA401-mma401_2", ("acc", "a", "b")),  # Pallas: the accumulator's layout_cast first
    ("MMA304-mma304_0", ("a", "b", "acc")),
    ("MMA501-mma401_2", ("a", "b", "acc")),  # no call: nothing to order
])
def test_creation_order_from_related_notes(key: str, order: tuple[str, ...]) -> None:
    f = parsed(key)
    if f.call is not None:
        assert f.call.creation_order == order


def test_creation_order_rules() -> None:
    def note(message: str, row: int, filename: str = "k.py") -> dict[str, Any]:
        return {"message": message, "filename": filename,
                "location": {"row": row, "column": 3}}

    assert creation_order(None, "k.py") == ("a", "b", "acc")
    # Layout notes, the MMA105 note and notes in other files say nothing about the order.
    assert creation_order([note("accumulator layout built here (m_warps=4)", 1),
                           note("this is the accumulator (int32), passed third", 2),
                           note("lhs operand `a` loaded here", 9, "other.py")],
                          "k.py") == ("a", "b", "acc")
    # Roles with a note first, by row; then the others in the default order.
    assert creation_order([note("accumulator created here as float32", 5),
                           note("operand `a` loaded here as int8", 9)],
                          "k.py") == ("acc", "a", "b")
    assert creation_order([note("rhs operand `b` loaded here", 5)], "k.py") == ("b", "a", "acc")
    assert creation_order([note("rhs operand `b` loaded here", 4),
                           note("lhs operand `a` converted here from MMALayouts.acc", 7),
                           note("lhs operand `a` is the result of an earlier mma "
                                "(accumulator layout)", 6),
                           note("accumulator loaded here", 1)],
                          "k.py") == ("acc", "b", "a")


# ---------------------------------------------------------------- the kernel specification

def _values(key: str) -> list[dict[str, Any]]:
    f = parsed(key)
    assert f.call is not None
    spec: list[dict[str, Any]] = kernel_spec(f.call, f.code).to_json()["values"]
    return spec


def test_loaded_operands_keep_their_layout_and_view() -> None:
    acc, a, b = _values("MMA301-mma301_0")
    # a was loaded with the rhs layout through its plain view: jax fails at the load.
    assert (a["layout_kind"], a["zeros"], a["transposed"]) == ("mma_rhs", False, False)
    assert (b["layout_kind"], b["transposed"]) == ("mma_rhs", True)
    assert not acc["transposed"]
    acc, a, b = _values("MMA302-mgpu_b_loaded_with_lhs_layout")
    assert (b["layout_kind"], b["transposed"]) == ("mma_lhs", True)


def test_a_known_view_decides_how_b_is_read() -> None:
    # mmalint reports the view of memory an `optimized=False` load read; B read through its
    # plain (k, n) view with the rhs tiling is the MMA302 bug, and the fix reads the transposed
    # view of an (n, k) buffer.
    raw = copy.deepcopy(BY_NAME["MMA302-mma302_0"])
    raw["call"]["b"]["layout"] = {"kind": "mma_rhs", "bitwidth": 16, "m_warps": 4, "name": "MMALayouts.rhs"}
    raw["call"]["b"]["view"] = "plain"
    raw["call"]["a"]["view"] = "plain"
    (finding,) = parse_findings([raw])
    assert finding.call is not None and finding.call.b.view == "plain"
    _, a, b = kernel_spec(finding.call, finding.code).to_json()["values"]
    assert (b["layout_kind"], b["transposed"]) == ("mma_rhs", False)
    assert not a["transposed"]
    fixed = fixed_call(finding.call, finding.code)
    assert fixed is not None and fixed.b.view == "transposed"
    _, _, b = kernel_spec(fixed, finding.code, conform=True).to_json()["values"]
    assert b["transposed"]


def test_converted_operand_is_built_in_its_source_layout() -> None:
    acc, a, _ = _values("MMA301-mgpu_mma_result_as_lhs")
    assert a["layout_kind"] == "mma_lhs" and not a["zeros"] and not a["transposed"]
    assert a["convert_from"] == {"layout_kind": "mma_acc", "layout_dtype": "float16",
                                 "m_warps": 4}
    # The Pallas accumulator is jnp.zeros cast to MMA_ACC: zeros, from a splat.
    acc, a, _ = _values("MMA301-mma301_2")
    assert acc["zeros"] and acc["convert_from"]["layout_kind"] == "splat"
    assert a["convert_from"]["layout_kind"] == "mma_acc"


def test_build_order_follows_the_program() -> None:
    f = parsed("MMA402-mgpu_acc_built_first_tiling")
    assert f.call is not None
    assert kernel_spec(f.call, f.code).build_order == (0, 1, 2)  # acc, a, b as passed
    f = parsed("MMA402-mma402_0")
    assert f.call is not None
    assert kernel_spec(f.call, f.code).build_order == (1, 0, 2)  # a, acc, b


# ---------------------------------------------------------------- fixes

def _fixed(key: str) -> Call:
    f = parsed(key)
    assert f.call is not None
    fixed = fixed_call(f.call, f.code)
    assert fixed is not None
    return fixed


def test_fix_layout_roles() -> None:
    a = _fixed("MMA301-mma301_0").a
    assert (a.layout.kind, a.layout.bitwidth, a.layout.m_warps) == ("mma_lhs", 16, 4)
    a = _fixed("MMA301-mma301_2").a
    assert a.converted_from is None and a.source == "loaded" and a.layout.kind == "mma_lhs"
    b = _fixed("MMA302-mma302_0").b
    assert (b.layout.kind, b.layout.bitwidth) == ("mma_rhs", 16)
    acc = _fixed("MMA303-mma303_0").acc
    assert (acc.layout.kind, acc.layout.m_warps, acc.source) == ("mma_acc", 4, "splatted")


def test_fix_m_warps() -> None:
    fixed = _fixed("MMA304-mma304_0")  # 96 x 96: m_warps 4 needs M % 64, 2 fits
    assert {op.layout.m_warps for op in fixed.intended} == {2}
    assert largest_m_warps(128, 128) == 4 and largest_m_warps(32, 64) == 2
    assert largest_m_warps(16, 128) == 1 and largest_m_warps(8, 8) == 4
    fixed = _fixed("MMA305-mma305_0")
    assert {op.layout.m_warps for op in fixed.intended} == {4}


def test_fix_shapes() -> None:
    fixed = _fixed("MMA401-mma401_0")  # a (128, 128), b (64, 128), acc (128, 64)
    assert (fixed.a.shape, fixed.b.shape, fixed.acc.shape) == ((128, 128), (128, 64),
                                                              (128, 64))
    fixed = _fixed("MMA402-mma402_0")  # a (32, 64), b (64, 128), acc (32, 128), m_warps 4
    assert (fixed.a.shape, fixed.b.shape, fixed.acc.shape) == ((64, 64), (64, 128), (64, 128))


# ---------------------------------------------------------------- MMA501 and the other tiers

@pytest.mark.parametrize(("key", "probe", "reworded"), [
    ("MMA501-mma501_0", "mmalayouts-m-warps", "mmalayouts-m-warps"),
    ("MMA501-mma401_2", "plgpu-mma", "plgpu-mma"),
    # A keyword that is accepted and ignored predicts no error: only the message names it.
    ("MMA501-mma501_2", "pallas-layout-m-warps", None),
])
def test_mma501_probe(key: str, probe: str, reworded: str | None) -> None:
    found = probe_for(parsed(key))
    assert found is not None and found.probe == probe
    other = copy.deepcopy(BY_NAME[key])
    other["message"] = "reworded"
    found = probe_for(parse_findings([other])[0])
    assert (found.probe if found else None) == reworded


def test_ptx_and_gpu_tiers_do_not_apply() -> None:
    verdicts = confirm_findings(RAW, {"ptx", "gpu"}, jobs=2, gpu_backend="cupy")
    ptx = [v for v in verdicts if v.tier == "ptx"]
    assert len(ptx) == len(RAW)
    assert all(v.verdict == "inconclusive" and "tier does not apply" in v.evidence
               for v in ptx), [v.evidence for v in ptx]
    gpu = [v for v in verdicts if v.tier == "gpu"]
    for v in gpu:
        assert v.verdict == "inconclusive"
        assert "tier does not apply" in v.evidence or "no GPU" in v.evidence, v.evidence


# ---------------------------------------------------------------- the jax tier (marker jax)

# What each jax version answers. The fixtures target 0.12 (MMA501: 0.10 or 0.11). None: on
# jax 0.11 (the GPU machine) either confirmed or inconclusive, never "not reproduced".
DIFFERS = "the finding targets jax 0.12"
NO_PLGPU = "has no plgpu.mma"
EXPECTED: dict[str, dict[str, tuple[str, str] | None]] = {
    "MMA301-mma301_0": {"0.10": ("inconclusive", "Tiled strides must be a multiple of the "
                                 "vector length, except for the vector dimension"),
                        "0.11": None, "0.12": ("confirmed", "UnsupportedTransferError")},
    "MMA301-mma301_2": {"0.10": ("inconclusive", NO_PLGPU), "0.11": None,
                        "0.12": ("confirmed", "NotImplementedError: Cannot convert from")},
    "MMA301-mgpu_mma_result_as_lhs": {"0.10": ("confirmed", "Cannot convert from"),
                                      "0.11": ("confirmed", "Cannot convert from"),
                                      "0.12": ("confirmed", "Cannot convert from")},
    "MMA302-mma302_0": {"0.10": ("inconclusive", NO_PLGPU), "0.11": None,
                        "0.12": ("confirmed", "UnsupportedTransferError")},
    "MMA302-mgpu_b_loaded_with_lhs_layout": {"0.10": ("inconclusive", DIFFERS), "0.11": None,
                                             "0.12": ("confirmed", "UnsupportedTransferError")},
    "MMA303-mma303_0": {"0.10": ("inconclusive", "Expected MMALayouts.acc layout for acc"),
                        "0.11": ("confirmed", "Expected MMALayouts.acc for acc"),
                        "0.12": ("confirmed", "Expected MMALayouts.acc for acc")},
    "MMA304-mma304_0": {"0.10": ("inconclusive", "unexpected keyword argument 'm_warps'"),
                        "0.11": ("confirmed", "but got m_warps=3"),
                        "0.12": ("confirmed", "but got m_warps=3")},
    "MMA305-mma305_0": {"0.10": ("inconclusive", "unexpected keyword argument 'm_warps'"),
                        "0.11": ("confirmed", "Expected MMALayouts.lhs layout for A"),
                        "0.12": ("confirmed", "Expected MMALayouts.lhs layout for A")},
    # jax 0.11 drops Layout.MMA_LHS(dt, m_warps=2): it builds (MMA501's point).
    # jax 0.11.0's source drops Pallas `m_warps=`; 0.11.2 honours it (seen on an H200).
    "MMA305-pallas_lane_operand_m_warps": {"0.10": ("inconclusive", NO_PLGPU),
                                           "0.11.0": ("inconclusive", "built without error"),
                                           "0.11.2": ("confirmed", "layout for A"),
                                           "0.12": ("confirmed", "layout for A")},
    "MMA401-mma401_0": {"0.10": ("confirmed", "N mismatch: 128 != 64"),
                        "0.11": ("confirmed", "N mismatch: 128 != 64"),
                        "0.12": ("confirmed", "N mismatch: 128 != 64")},
    "MMA401-mma401_2": {"0.10": ("inconclusive", NO_PLGPU),
                        "0.11": ("confirmed", "Incompatible shapes"),
                        "0.12": ("confirmed", "Incompatible shapes")},
    "MMA402-mma402_0": {v: ("confirmed", "does not apply to shape (32, 64)")
                        for v in ("0.10", "0.11", "0.12")},
    "MMA402-mgpu_acc_built_first_tiling": {v: ("confirmed", "does not apply to shape (32, 128)")
                                           for v in ("0.10", "0.11", "0.12")},
    "MMA501-mma501_0": {"0.10": ("confirmed", "lacks `MMALayouts(..., m_warps=...)`"),
                        "0.11": ("inconclusive", "has `MMALayouts(..., m_warps=...)`"),
                        "0.12": ("inconclusive", "has `MMALayouts(..., m_warps=...)`")},
    "MMA501-mma401_2": {"0.10": ("confirmed", "has no attribute 'mma'"),
                        "0.11": ("inconclusive", "has `plgpu.mma`"),
                        "0.12": ("inconclusive", "has `plgpu.mma`")},
    "MMA501-mma501_2": {"0.10": ("inconclusive", "AttributeError: MMA_LHS"),
                        "0.11.0": ("confirmed", "accepts and ignores it"),
                        "0.11.2": ("not reproduced", "honours"),
                        "0.12": ("inconclusive", "honours")},
}


@pytest.fixture(scope="module")
def jax_verdicts(jax_info: tuple[str | None, str | None]) -> dict[str, Verdict]:
    """Every fixture through the jax tier once (two workers at a time)."""
    verdicts = confirm_findings(RAW, {"jax"}, jobs=2, timeout=120)
    return {name(RAW[v.index]): v for v in verdicts}


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


@pytest.mark.jax
@pytest.mark.parametrize("key", list(EXPECTED))
def test_jax_tier(key: str, jax_verdicts: dict[str, Verdict],
                  jax_info: tuple[str | None, str | None]) -> None:
    version, problem = jax_info
    assert version is not None
    verdict = jax_verdicts[key]
    if problem is not None:
        assert verdict.verdict == "inconclusive", verdict.evidence
        return
    want = EXPECTED[key].get(version) or EXPECTED[key].get(_minor(version))
    if want is None:
        assert verdict.verdict in ("confirmed", "inconclusive"), verdict.evidence
        return
    assert verdict.verdict == want[0], verdict.evidence
    assert want[1] in verdict.evidence, verdict.evidence
    if verdict.verdict == "confirmed" and key.startswith(("MMA3", "MMA4")):
        assert "the fix built without error" in verdict.evidence, verdict.evidence


@pytest.mark.jax
@pytest.mark.parametrize(("key", "fix"), [
    ("MMA301-mma301_2", "f32.f16.f16.f32"),
    ("MMA402-mgpu_acc_built_first_tiling", "f32.bf16.bf16.f32"),
])
def test_gpu_worker_dry_run(key: str, fix: str,
                            jax_info: tuple[str | None, str | None]) -> None:
    """The gpu tier's jax path up to compiling: data, arrays (B transposed), build, lowering."""
    version, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    assert version is not None
    f = parsed(key)
    assert f.call is not None
    if f.call.api == "plgpu.mma" and _minor(version) == "0.10":
        pytest.skip(f"jax {version} has no plgpu.mma")
    fixed = fixed_call(f.call, f.code)
    assert fixed is not None
    case = {"flagged": kernel_spec(f.call, f.code).to_json(),
            "fix": kernel_spec(fixed, f.code, conform=True).to_json(), "seed": 1,
            "dry_run": True}
    out = subprocess.run([sys.executable, "-m", "mmalint.confirm.gpu_worker"],
                         input=json.dumps(case), capture_output=True, text=True, timeout=120,
                         env=worker_env({"JAX_PLATFORMS": "cpu"}))
    assert out.returncode == 0, out.stderr[-2000:]
    records = {r["part"]: r for r in parse_records(out.stdout)}
    assert records["fix"]["status"] == "lowered", records["fix"]
    assert records["fix"]["has_reference"] is True
    assert records["fix"]["instructions"] == [f"mma.sync.aligned.m16n8k16.row.col.{fix}"]
    assert records["flagged"]["status"] == "raised"
    predicted = f.predicted
    assert predicted is not None
    assert predicted.matches(records["flagged"]["exception"], records["flagged"]["message"])


@pytest.mark.gpu
def test_gpu_tier_jax_backend(jax_info: tuple[str | None, str | None]) -> None:
    """On a GPU: each flagged kernel fails as jax fails on the CPU, and each fix compiles, runs
    and matches NumPy (a fix that does not makes the case inconclusive, which is caught)."""
    _, problem = jax_info
    if problem is not None:
        pytest.skip(problem)
    verdicts = confirm_findings(RAW, {"gpu"}, jobs=4, timeout=120, gpu_backend="jax")
    for v in verdicts:
        key = name(RAW[v.index])
        if key.startswith("MMA501"):
            assert "tier does not apply" in v.evidence, v.evidence
            continue
        assert v.verdict in ("confirmed", "inconclusive"), (key, v.evidence)
        assert "did not match NumPy" not in v.evidence, (key, v.evidence)
        assert "reference lowering failed" not in v.evidence, (key, v.evidence)
        if "has no plgpu.mma" not in v.evidence:
            assert "; the fix is " in v.evidence, (key, v.evidence)
