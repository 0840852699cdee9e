"""Reading findings: shape checks, operand facts, argument order."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm.signature import FindingsError, load_findings, parse_findings, read_findings


def test_fixtures_parse(findings: list[dict[str, Any]]) -> None:
    parsed = parse_findings(findings)
    assert len(parsed) == len(findings)
    assert all(f.call is not None and f.problem is None for f in parsed)
    codes = {(f.code, f.call.api) for f in parsed if f.call}
    for code in ("MMA101", "MMA102", "MMA103", "MMA104", "MMA105", "MMA201"):
        assert (code, "mgpu.mma") in codes and (code, "plgpu.mma") in codes
    assert {("MMA202", "mgpu.mma"), ("MMA203", "mgpu.mma"), ("MMA204", "plgpu.mma")} <= codes


def test_operand_facts(findings: list[dict[str, Any]]) -> None:
    by_code = {(f.code, f.call.api): f for f in parse_findings(findings) if f.call}
    silent = by_code[("MMA203", "mgpu.mma")].call
    assert silent is not None
    assert silent.a.resolved_dtype == "uint8" and silent.a.memory_dtype == "int8"
    assert silent.a.is_signed is False and silent.a.bits == 8
    missing = by_code[("MMA202", "mgpu.mma")].call
    assert missing is not None
    # dtype null, i8 and signless: no NumPy dtype can be named, the MLIR type still can.
    assert missing.a.dtype is None and missing.a.mlir == "i8" and missing.a.is_signed is None


def test_acc_last_order(findings: list[dict[str, Any]]) -> None:
    f = next(f for f in parse_findings(findings) if f.code == "MMA105" and f.call
             and f.call.api == "mgpu.mma")
    assert f.call is not None
    acc, a, _ = f.call.intended
    assert acc.resolved_dtype == "int32" and a.layout.kind == "mma_lhs"
    assert [v.layout.kind for v in f.call.passed] == ["mma_lhs", "mma_rhs", "mma_acc"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"code": "MMA101"}, "expected a JSON array"),
        ([1], "finding 0: expected an object, got a number"),
        ([{"filename": "x.py", "location": {"row": 1, "column": 1}, "call": {}}],
         "missing or non-string 'code'"),
        ([{"code": "MMA101", "filename": "x.py", "location": {"row": "1", "column": 1},
           "call": {}}], "'location' must be an object"),
        ([{"code": "MMA101", "filename": "x.py", "location": {"row": 1, "column": 1}}],
         "missing 'call'"),
        ([{"code": "MMA101", "filename": "x.py", "location": {"row": 1, "column": 1},
           "call": {}, "predicted_error": "boom"}], "'predicted_error' must be an object"),
    ],
)
def test_wrong_shape(data: object, message: str) -> None:
    with pytest.raises(FindingsError, match=message):
        parse_findings(data)


def test_gaps_are_not_errors(findings: list[dict[str, Any]]) -> None:
    """A call signature without an element type is still a finding; it gets a reason."""
    broken = copy.deepcopy(findings[0])
    broken["call"]["a"]["dtype"] = None
    broken["call"]["a"]["element_type"] = None
    broken["call"]["a"]["layout"]["bitwidth"] = None
    empty = copy.deepcopy(findings[0])
    empty["call"] = None
    parsed = parse_findings([broken, empty])
    assert parsed[0].call is None and "a element type is unknown" in (parsed[0].problem or "")
    assert parsed[1].call is None and parsed[1].problem == "the finding has no call signature"


def test_read_findings_errors(tmp_path: Path) -> None:
    with pytest.raises(FindingsError, match="cannot read"):
        read_findings(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(FindingsError, match="not valid JSON"):
        read_findings(bad)
    good = tmp_path / "good.json"
    good.write_text("[]")
    assert read_findings(good) == []
    assert load_findings("-", stdin_text="[]") == []


def test_import_needs_neither_jax_nor_libcst(tmp_path: Path) -> None:
    """`mmalint.confirm` and its CLI import with jax and libcst blocked."""
    import subprocess

    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('jax', 'jaxlib', 'libcst'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, _Block())\n")
    repo = Path(__file__).resolve().parents[2]
    code = ("import mmalint.confirm as c, mmalint.confirm.cli, mmalint.confirm.runner; "
            "print(c.confirm_findings.__name__, c.Verdict.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": f"{tmp_path}:{repo}", "PATH": ""}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["confirm_findings", "Verdict"]


def test_fixture_file_is_an_array() -> None:
    data = json.loads((Path(__file__).parent / "data" / "findings.json").read_text())
    assert isinstance(data, list) and all("call" in f for f in data)


def test_prefix_match(findings: list[dict[str, Any]]) -> None:
    raw = copy.deepcopy(findings[0])
    raw["predicted_error"] = {"exception": "VerificationError", "jax_version": "0.12",
                              "message": "Pallas encountered an internal verification error.",
                              "match": "prefix"}
    predicted = parse_findings([raw])[0].predicted
    assert predicted is not None and str(predicted).endswith("error....")
    assert predicted.matches("VerificationError", "Pallas encountered an internal "
                             "verification error. Please file a bug ...")
    assert not predicted.matches("ValueError", "Pallas encountered an internal verification "
                                 "error.")
    raw["predicted_error"]["match"] = "regex"
    with pytest.raises(FindingsError, match="must be"):
        parse_findings([raw])


def test_operand_dtype_inferred_from_layout(findings: list[dict[str, Any]]) -> None:
    """`mma(a_tile, b_tile, acc)` with tiles of unknown dtype: the layout's bit width and the
    accumulator's kind decide, and the evidence says it was assumed."""
    raw = copy.deepcopy(findings[5])  # MMA105 mgpu, int32 acc
    for role, bits in (("a", 8), ("b", 8)):
        raw["call"][role].update(dtype=None, element_type=None)
        raw["call"][role]["layout"]["bitwidth"] = bits
    call = parse_findings([raw])[0].call
    assert call is not None and call.a.resolved_dtype == "int8" and call.b.mlir == "i8"
    assert "a's dtype is unknown: built as int8" in call.notes[0]
    raw["call"]["acc"].update(dtype="float32", element_type="f32", signedness="signless")
    raw["call"]["a"]["layout"]["bitwidth"] = 16
    call = parse_findings([raw])[0].call
    assert call is not None and call.a.resolved_dtype == "bfloat16"
    raw["call"]["a"]["layout"]["bitwidth"] = None
    assert parse_findings([raw])[0].call is None
