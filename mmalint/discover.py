"""Files to check, from the paths on the command line."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Discovered:
    path: Path
    display: str  # the path as the user will read it in reports
    explicit: bool  # named on the command line: checked even if excluded or not *.py


class PathError(Exception):
    """A path named on the command line that does not exist or cannot be listed."""


def _excluded(path: Path, patterns: tuple[str, ...]) -> bool:
    name = path.name
    text = path.as_posix()
    for pattern in patterns:
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(text, pattern):
            return True
        if "/" in pattern and fnmatch.fnmatch(text, f"*/{pattern.strip('/')}"):
            return True
    return False


def discover(
    paths: list[str], exclude: tuple[str, ...], errors: list[str]
) -> Iterator[Discovered]:
    """Python files under `paths`, in a stable order; missing paths go to `errors`.

    Directories are walked without following symlinks, so a symlink loop cannot trap the walk.
    """
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            errors.append(f"{raw}: no such file or directory")
            continue
        if path.is_file() or (path.is_symlink() and not path.is_dir()):
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield Discovered(path, raw, True)
            continue
        if not path.is_dir():
            errors.append(f"{raw}: not a file or directory")
            continue
        for root, dirs, files in os.walk(path, onerror=lambda e: errors.append(f"{e.filename}: {e.strerror}")):
            root_path = Path(root)
            dirs[:] = sorted(
                d for d in dirs
                if not _excluded(root_path / d, exclude) and not (root_path / d).is_symlink()
            )
            for name in sorted(files):
                file_path = root_path / name
                if not name.endswith((".py", ".pyi")) or _excluded(file_path, exclude):
                    continue
                resolved = file_path.resolve()
                if resolved in seen:
                    continue
                seen.add(resolved)
                yield Discovered(file_path, str(file_path), False)
