"""Shared helpers: analyse a snippet, run the installed command in a real subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mmalint.engine import FileReport, check_text
from mmalint.runtime import tune_gc
from mmalint.settings import Settings

REPO = Path(__file__).resolve().parent.parent

tune_gc()  # the suite analyses in this process as the command does in its own


def lint(code: str, target_jax: str = "0.12", **settings: object) -> FileReport:
    """Every diagnostic for a snippet (dedented), as the engine reports them."""
    return check_text("snippet.py", textwrap.dedent(code), Settings(target_jax=target_jax, **settings))  # type: ignore[arg-type]


def codes(code: str, target_jax: str = "0.12", **settings: object) -> list[str]:
    return sorted(d.code or d.name for d in lint(code, target_jax, **settings).diagnostics)


def run_cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m mmalint ARGS` in a subprocess, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "mmalint", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        timeout=300,
    )


@pytest.fixture
def repo() -> Path:
    return REPO
