"""What a checked project says about its jax: what it declares, what it locks, what it installed.

Read from the project's files only: mmalint never imports (or runs) the project's jax, so a
broken or hostile environment cannot run code here. Every file is read only if it is a regular
file, and only up to a cap; one that cannot be read or parsed says nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from mmalint import toml
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.jaxversion import canonicalize_name

MAX_DECLARATION_BYTES = 4 * 1024 * 1024  # a pyproject.toml or a requirements file
MAX_LOCK_BYTES = 64 * 1024 * 1024  # a lock file of a large project is a few MiB
LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock")
ENVIRONMENTS = (".venv", "venv")
_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = re.compile(r"^(?:--requirement|--constraint|-r|-c)(?:\s*=\s*|\s+)?(\S+)")
_OPTION = re.compile(r"\s+--?[A-Za-z]")  # `--hash=...` and other options after a requirement


@dataclass(frozen=True)
class Evidence:
    """One statement of the project about its jax version."""

    source: str  # where, for a person: "requirements.txt", "uv.lock", ".venv"
    requirement: str  # as written: "jax[cuda12]==0.10.2"; a pin or an install as "jax 0.10.2"
    specifier: SpecifierSet  # the versions it allows

    @property
    def text(self) -> str:
        return f"{self.source}: {self.requirement}"


def declared_jax(root: Path) -> Evidence | None:
    """The first jax requirement with a version that the project at `root` declares.

    In this order: pyproject.toml `[project] dependencies`, `[project.optional-dependencies]`,
    `[dependency-groups]`; `requirements*.txt` in `root` (`requirements.txt` first, `-r` and
    `-c` includes followed one level); the `jax` pin of uv.lock, poetry.lock, pdm.lock. A
    requirement with no version (`jax`, `jax[cuda12]`, `jax @ URL`) says nothing.
    """
    for evidence in _declarations(root):
        if evidence.specifier:
            return evidence
    return None


def environment_jax(root: Path, environ: Mapping[str, str]) -> Evidence | None:
    """The jax installed in the project's own environment, from its `dist-info` metadata.

    `VIRTUAL_ENV` when it is the project's (inside `root`, or its `.project` file names `root`,
    as pipenv and virtualenvwrapper write), else `.venv/` or `venv/` in `root`. An environment
    that is someone else's (a pre-commit hook's, the editor's) says nothing about the project.
    """
    candidates: list[tuple[str, Path]] = []
    active = environ.get("VIRTUAL_ENV")
    if active and _belongs(Path(active), root):
        candidates.append((f"$VIRTUAL_ENV ({active})", Path(active)))
    candidates.extend((name, root / name) for name in ENVIRONMENTS)
    for label, environment in candidates:
        version = _installed_version(environment)
        if version is not None:
            return Evidence(label, f"jax {version} installed", pinned(version))
    return None


def _declarations(root: Path) -> Iterator[Evidence]:
    project = _toml(root / "pyproject.toml", MAX_DECLARATION_BYTES)
    table = project.get("project")
    if isinstance(table, dict):
        yield from _requirements(table.get("dependencies"), "pyproject.toml [project] dependencies")
        extras = table.get("optional-dependencies")
        if isinstance(extras, dict):
            for extra, items in extras.items():
                yield from _requirements(items, f"pyproject.toml [project.optional-dependencies] {extra}")
    groups = project.get("dependency-groups")
    if isinstance(groups, dict):
        for group, items in groups.items():  # `{include-group = ...}` entries are read where they stand
            yield from _requirements(items, f"pyproject.toml [dependency-groups] {group}")
    for path in _requirement_files(root):
        yield from _requirements_file(path, root, include=True)
    for name in LOCK_FILES:
        yield from _lock(root / name, name)


def _requirements(items: Any, source: str) -> Iterator[Evidence]:
    if not isinstance(items, list):
        return
    for item in items:
        if isinstance(item, str) and (evidence := _jax(item, source)) is not None:
            yield evidence


def _jax(text: str, source: str) -> Evidence | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if canonicalize_name(requirement.name) != "jax":
        return None
    return Evidence(source, text.strip(), requirement.specifier)


def _requirement_files(root: Path) -> list[Path]:
    try:
        names = sorted(
            entry.name for entry in os.scandir(root)
            if entry.name.startswith("requirements") and entry.name.endswith(".txt")
        )
    except OSError:
        return []
    if "requirements.txt" in names:
        names.remove("requirements.txt")
        names.insert(0, "requirements.txt")
    return [root / name for name in names]


def _requirements_file(path: Path, root: Path, include: bool, via: str | None = None) -> Iterator[Evidence]:
    text = _text(path, MAX_DECLARATION_BYTES)
    if text is None:
        return
    source = _display(path, root) + (f" (via -r in {via})" if via else "")
    for line in re.sub(r"\\\r?\n", " ", text).splitlines():
        line = _COMMENT.sub("", line).strip()
        if not line:
            continue
        if line.startswith("-"):
            included = _INCLUDE.match(line)
            if included and include:  # one level: an include's includes are not followed
                yield from _requirements_file(path.parent / included.group(1), root, False, _display(path, root))
            continue
        evidence = _jax(_OPTION.split(line, maxsplit=1)[0], source)
        if evidence is not None:
            yield evidence


def _lock(path: Path, name: str) -> Iterator[Evidence]:
    """The `jax` pins of a uv, poetry or pdm lock file (all three use `[[package]] name, version`)."""
    packages = _toml(path, MAX_LOCK_BYTES).get("package")
    if not isinstance(packages, list):
        return
    versions: list[Version] = []
    for package in packages:
        if isinstance(package, dict) and canonicalize_name(str(package.get("name"))) == "jax" and isinstance(package.get("version"), str):
            try:
                versions.append(Version(package["version"]))
            except InvalidVersion:
                continue
    if versions:  # a lock with several (uv's forks per platform) predicts for the oldest
        version = str(min(versions))
        yield Evidence(name, f"jax {version}", pinned(version))


def _installed_version(environment: Path) -> str | None:
    patterns = ("lib/python*/site-packages/jax-*.dist-info/METADATA", "Lib/site-packages/jax-*.dist-info/METADATA")
    try:
        found = sorted(m for pattern in patterns for m in environment.glob(pattern))
    except OSError:
        return None
    for metadata in found:
        text = _text(metadata, MAX_DECLARATION_BYTES)
        if text is None:
            continue
        headers = dict(
            line.split(":", 1) for line in text.split("\n\n", 1)[0].splitlines() if ":" in line and not line[0].isspace()
        )
        name, version = headers.get("Name", "").strip(), headers.get("Version", "").strip()
        if canonicalize_name(name) == "jax" and version:
            return version
    return None


def _belongs(environment: Path, root: Path) -> bool:
    """Whether the environment at `environment` is the project's at `root`."""
    real = Path(os.path.realpath(environment))
    real_root = Path(os.path.realpath(root))
    if real == real_root or real_root in real.parents:
        return True
    named = _text(environment / ".project", 64 * 1024)
    return named is not None and named.strip() != "" and Path(os.path.realpath(named.strip())) == real_root


def pinned(version: str) -> SpecifierSet:
    """The specifier that allows exactly `version` (`===` for one that is not PEP 440)."""
    try:
        return SpecifierSet(f"=={version}")
    except ValueError:
        return SpecifierSet(f"==={version}")


def _toml(path: Path, limit: int) -> dict[str, Any]:
    text = _text(path, limit)
    if text is None:
        return {}
    try:
        return toml.loads(text)
    except (toml.TOMLDecodeError, RecursionError):
        return {}


def _text(path: Path, limit: int) -> str | None:
    try:
        return read_regular(path, limit).decode("utf-8")
    except (UnreadableInput, UnicodeDecodeError):
        return None


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
