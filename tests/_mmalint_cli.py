"""Run the installed mmalint in a real subprocess, as a user would (shared by the CLI tests).

A module of its own rather than conftest.py: tests/ has more than one conftest.py, and
`from conftest import ...` would pick whichever is first on sys.path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_cli(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m mmalint ARGS` in a subprocess (`env`: its whole environment, default ours)."""
    return subprocess.run(
        [sys.executable, "-m", "mmalint", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        timeout=300,
        env=env,
    )
