"""Shared fixtures and skip conditions for the reference-lowering tests."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
FINDINGS = DATA / "findings.json"
FALSE_FINDINGS = DATA / "false_findings.json"
REPO = Path(__file__).resolve().parents[2]


def load(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


def finding_id(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{finding['call']['api']}-{Path(finding['filename']).stem}"


@cache
def jax_status() -> tuple[str | None, str | None]:
    """(installed jax version, why Mosaic GPU cannot be imported or None)."""
    if importlib.util.find_spec("jax") is None:
        return None, "jax is not installed"
    out = subprocess.run(
        [sys.executable, "-c", "import jax; print(jax.__version__); "
         "import jax.experimental.mosaic.gpu"],
        capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
    )
    version = out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
    if out.returncode != 0:
        last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "import failed"
        return version, last
    return version, None


@cache
def gpu_count() -> int:
    """NVIDIA GPUs `nvidia-smi -L` lists (0 without nvidia-smi)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip marked tests cleanly where their tool is missing."""
    no_ptxas = pytest.mark.skip(reason="ptxas not found")
    no_jax = pytest.mark.skip(reason="jax is not installed")
    no_gpu = pytest.mark.skip(reason="no NVIDIA GPU (nvidia-smi absent or lists none)")
    here = Path(__file__).parent
    for item in items:
        if here not in Path(str(item.path)).parents:
            continue
        if "ptxas" in item.keywords:
            from mmalint.confirm.ptxas import find_ptxas

            if find_ptxas() is None:
                item.add_marker(no_ptxas)
        if "jax" in item.keywords and importlib.util.find_spec("jax") is None:
            item.add_marker(no_jax)
        if "gpu" in item.keywords and gpu_count() == 0:
            item.add_marker(no_gpu)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`fixture_finding`: one test per finding of data/findings.json."""
    if "fixture_finding" in metafunc.fixturenames:
        metafunc.parametrize("fixture_finding", load(FINDINGS), ids=finding_id)


@pytest.fixture(scope="session")
def jax_info() -> tuple[str | None, str | None]:
    """(installed jax version, why Mosaic GPU does not import, or None)."""
    return jax_status()


@pytest.fixture(scope="session")
def findings() -> list[dict[str, Any]]:
    return load(FINDINGS)


@pytest.fixture(scope="session")
def false_findings() -> list[dict[str, Any]]:
    return load(FALSE_FINDINGS)
