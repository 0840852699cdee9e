"""The pre-commit hooks, run by pre-commit itself (`try-repo` installs this checkout into a
fresh hook environment, as a user's `pre-commit install` would from the tag)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import REPO

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (it is in the `test` extra)")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_hooks_fail_on_a_buggy_kernel_then_pass_after_the_fix(tmp_path: Path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("the mmalint checkout is not a git repository: pre-commit try-repo needs one")
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / "kernel.py").write_text(k.PALLAS_SWAPPED)
    (project / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.12"\n')
    _git("add", "-A", cwd=project)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),  # a fresh hook environment
        "PRE_COMMIT_COLOR": "never",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
    }

    def hooks() -> subprocess.CompletedProcess[str]:
        assert PRE_COMMIT is not None
        return subprocess.run(
            [PRE_COMMIT, "try-repo", str(REPO), "--files", "kernel.py", "--verbose"],
            cwd=project, env=env, capture_output=True, text=True, timeout=600,
        )

    first = hooks()
    out = first.stdout + first.stderr
    assert first.returncode == 1, out
    assert "MMA105" in out and "Found 1 error." in out  # `mmalint` reports
    assert "files were modified by this hook" in out  # `mmalint-fix` fixed it
    assert (project / "kernel.py").read_text() == k.PALLAS_CLEAN

    second = hooks()
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 2
