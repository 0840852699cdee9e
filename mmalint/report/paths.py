"""How machine formats name a finding's file: relative to the repository root on GitHub Actions.

A workflow step with `working-directory: sub` runs mmalint in `sub/`, so the paths it was given
are relative to `sub/`; GitHub matches annotations and code scanning results to files by their
path from the repository root, which is `GITHUB_WORKSPACE`.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath


def workspace_from_environment() -> str | None:
    """`GITHUB_WORKSPACE` when mmalint runs in a GitHub Actions job, else None."""
    return os.environ.get("GITHUB_WORKSPACE") or None


def workspace_relative(filename: str, workspace: str, cwd: Path) -> str | None:
    """`filename` (as given: absolute, or relative to `cwd`) as a `/`-separated path relative to
    `workspace`, or None when the file is not inside it."""
    path = Path(filename)
    if not path.is_absolute():
        path = cwd / path
    # abspath folds `..` the way the user meant it; realpath also matches through symlinks.
    for resolve in (os.path.abspath, os.path.realpath):
        try:
            relative = Path(resolve(path)).relative_to(resolve(workspace))
        except ValueError:
            continue
        return PurePosixPath(*relative.parts).as_posix()
    return None
