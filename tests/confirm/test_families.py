"""The instruction family is the unit of layout in the reference lowering.

Everything about the warp-level family lives in `confirm/families/mma/`; the rest of confirm
reaches it through `confirm.families`, by the call's family, so a new family is one folder.
"""

from __future__ import annotations

from pathlib import Path

from mmalint.confirm import families
from mmalint.confirm.signature import parse_findings

CONFIRM = Path(__file__).resolve().parents[2] / "mmalint" / "confirm"


def test_only_the_family_folder_names_its_apis() -> None:
    for name in ("mma", "wgmma", "tcgen05"):
        family = families.host(name)
        assert family is not None
        outside = [path for path in CONFIRM.rglob("*.py")
                   if not path.relative_to(CONFIRM).as_posix().startswith(f"families/{name}/")]
        assert outside
        for path in outside:
            text = path.read_text(encoding="utf-8")
            for api in family.apis:
                assert f'"{api}"' not in text, f"{path.relative_to(CONFIRM)} names {api}"


def test_family_from_the_finding_or_else_from_the_api() -> None:
    assert families.family_of("mgpu.mma") == "mma"
    assert families.family_of("plgpu.mma") == "mma"
    assert families.family_of("plgpu.wgmma") == "wgmma"
    assert families.family_of("mgpu.tcgen05.mma") == "tcgen05"
    assert families.family_of("plgpu.future_mma") is None
    assert families.family_of("plgpu.wgmma", "mma") == "mma"
    assert families.covered_apis() == ("mgpu.mma, plgpu.mma, mgpu.wgmma, plgpu.wgmma, "
                                       "mgpu.tcgen05.mma and plgpu.tcgen05_mma")


def _finding(call: dict[str, object]) -> dict[str, object]:
    operand = {"dtype": "int8", "element_type": "i8", "signedness": "signed"}
    return {"code": "MMA101", "filename": "k.py", "location": {"row": 1, "column": 1},
            "call": {"acc": {"dtype": "float32", "element_type": "f32"}, "a": operand,
                     "b": operand, **call}}


def test_the_call_carries_its_family() -> None:
    derived, declared, unknown = parse_findings([
        _finding({"api": "mgpu.mma"}),
        _finding({"api": "mgpu.mma", "family": "mma"}),
        _finding({"api": "plgpu.future_mma", "family": "future"}),
    ])
    assert derived.call is not None and derived.call.family == "mma"
    assert declared.call is not None and declared.call.family == "mma"
    assert unknown.call is not None and families.host(unknown.call.family) is None
    family = families.host("mma")
    assert family is not None and family.apis == ("mgpu.mma", "plgpu.mma")
