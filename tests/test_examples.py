"""The bundled examples: each buggy kernel reports exactly its codes; each fixed twin is clean."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from mmalint.engine import check_text
from mmalint.settings import Settings

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MANIFEST = tomllib.loads((EXAMPLES / "expected.toml").read_text())["example"]
VERSIONS = ("0.11", "0.12")


def _codes(name: str, version: str) -> list[str]:
    path = EXAMPLES / name
    report = check_text(str(path), path.read_text(), Settings(target_jax=version))
    return sorted({d.code or d.name for d in report.diagnostics})


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_buggy_example_reports_exactly_its_codes(entry: dict, version: str) -> None:  # type: ignore[type-arg]
    # An entry with `versions` holds a bug of those jax versions only: clean in the others.
    expected = sorted(set(entry["codes"])) if version in entry.get("versions", VERSIONS) else []
    assert _codes(entry["file"], version) == expected


@pytest.mark.parametrize("entry", [e for e in MANIFEST if "versions" in e], ids=lambda e: e["file"])
def test_example_of_older_jax_reports_its_codes_there(entry: dict) -> None:  # type: ignore[type-arg]
    for version in entry["versions"]:
        assert _codes(entry["file"], version) == sorted(set(entry["codes"]))
        assert _codes(entry["fixed"], version) == []


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("entry", MANIFEST, ids=[e["fixed"] for e in MANIFEST])
def test_fixed_twin_is_clean(entry: dict, version: str) -> None:  # type: ignore[type-arg]
    assert _codes(entry["fixed"], version) == []


def test_manifest_covers_every_file_and_at_least_eight_kernels() -> None:
    listed = {e["file"] for e in MANIFEST} | {e["fixed"] for e in MANIFEST}
    on_disk = {p.name for p in EXAMPLES.glob("*.py")}
    assert listed == on_disk
    assert len(MANIFEST) >= 8
    styles = " ".join((EXAMPLES / e["file"]).read_text() for e in MANIFEST)
    assert "as_gpu_kernel" in styles and "plgpu.kernel" in styles
