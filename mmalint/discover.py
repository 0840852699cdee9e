"""Files to check, from the paths on the command line."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from mmalint.inputs import RealPaths, describe_os_error, kind_of, regular_file_problem

# What a walk picks up, as ruff: Python sources, stubs, and Jupyter notebooks (their code cells).
CHECKED_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Discovered:
    path: Path
    display: str  # the path as the user will read it in reports
    explicit: bool  # named on the command line: checked even if excluded or not of CHECKED_SUFFIXES


class Exclusions(Protocol):
    """What a walk skips (`mmalint.config.Resolver`: exclude patterns and .gitignore files)."""

    def excludes(self, path: Path, is_dir: bool) -> bool:
        """Whether the walk skips `path`, found in a directory it walks."""
        ...

    def excludes_named(self, path: Path) -> bool:
        """With `force_exclude`: whether `path`, named on the command line, is skipped too."""
        ...


@dataclass(frozen=True)
class Globs:
    """Plain glob patterns, matched against a path's name and its path as walked."""

    patterns: tuple[str, ...]

    def excludes(self, path: Path, is_dir: bool) -> bool:
        return _excluded(path, self.patterns)

    def excludes_named(self, path: Path) -> bool:
        return _excluded(path, self.patterns)


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
    paths: list[str], exclude: Exclusions | tuple[str, ...], errors: list[str],
    skipped: list[str] | None = None, force_exclude: bool = False,
) -> Iterator[Discovered]:
    """Python files and Jupyter notebooks under `paths`, in a stable order.

    A walk skips what `exclude` excludes; a path named on the command line is checked (a named
    directory walked) even so, unless `force_exclude` (ruff's `--force-exclude`). A named path
    that is missing, unreadable or not a regular file or directory goes to `errors`; a file
    found by walking that is not a regular file (a FIFO, a device, a dangling symlink or a
    symlink loop) is never opened and goes to `skipped` (to `errors` when `skipped` is None). Directories are walked without following symlinks, so a symlink loop
    cannot trap the walk.
    """
    exclusions = Globs(exclude) if isinstance(exclude, tuple) else exclude
    seen: set[str] = set()
    real = RealPaths()
    for raw in paths:
        path = Path(raw)
        try:
            info = os.lstat(path)
        except OSError as exc:
            reason = "no such file or directory" if exc.errno == errno.ENOENT else describe_os_error(exc)
            errors.append(f"{raw}: {reason}")
            continue
        if stat.S_ISLNK(info.st_mode):  # a named symlink is followed, to a file or a directory
            try:
                info = os.stat(path)
            except OSError as exc:
                errors.append(f"{raw}: {describe_os_error(exc)}")
                continue
        if force_exclude and exclusions.excludes_named(path):
            continue
        if stat.S_ISDIR(info.st_mode):
            yield from _walk(path, exclusions, errors, skipped, seen, real)
            continue
        if not stat.S_ISREG(info.st_mode):
            errors.append(f"{raw}: {kind_of(info.st_mode)}, not a regular file or directory")
            continue
        resolved = real(path)
        if resolved not in seen:
            seen.add(resolved)
            yield Discovered(path, raw, True)


def _walk(
    path: Path, exclusions: Exclusions, errors: list[str], skipped: list[str] | None,
    seen: set[str], real: RealPaths,
) -> Iterator[Discovered]:
    notes = errors if skipped is None else skipped
    for root, dirs, files in os.walk(path, onerror=lambda e: errors.append(f"{e.filename}: {e.strerror}")):
        root_path = Path(root)
        dirs[:] = sorted(
            d for d in dirs
            if not (root_path / d).is_symlink() and not exclusions.excludes(root_path / d, True)
        )
        for name in sorted(files):
            file_path = root_path / name
            if not name.endswith(CHECKED_SUFFIXES) or exclusions.excludes(file_path, False):
                continue
            problem = regular_file_problem(file_path)
            if problem is not None:
                notes.append(f"{file_path}: {problem}; skipped")
                continue
            resolved = real(file_path)
            if resolved in seen:
                continue
            seen.add(resolved)
            yield Discovered(file_path, str(file_path), False)
