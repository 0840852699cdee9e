"""The jax version whose behaviour mmalint predicts, and which source decided it.

In order, the first that says wins (as ruff infers `target-version` from `requires-python`):
`--target-jax`, `target-jax` in the configuration, the jax the project declares
(`project_jax.declared_jax`), the jax in the project's own environment
(`project_jax.environment_jax`), the jax installed next to mmalint, the newest the catalog
knows. Without the project's word the findings would depend on where mmalint runs: a
pre-commit hook, a pipx install or an editor's server has no jax of its own and would predict
the newest for a project that pins an older one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from mmalint.catalog import Catalog
from mmalint.project_jax import Evidence, declared_jax, environment_jax, pinned

_VERSION = re.compile(r"\d+\.\d+(\.\d+)*")
_PATCH_PROBES = 20  # patch releases probed per known minor, beyond those a specifier names


class TargetError(ValueError):
    """A requested jax version mmalint does not know: the message lists those it does."""


@dataclass(frozen=True)
class TargetJax:
    version: str  # a catalog version key: "0.11"
    source: str  # which source decided, for `--show-settings`: "requirements.txt: jax==0.10.2"
    note: str | None = None  # why the version is not simply the one written (a range, an unknown one)
    warn: bool = False  # the note is worth a warning on every run (a version mmalint does not know)


def parse_version(text: str, catalog: Catalog) -> str:
    """The catalog version for an explicit `--target-jax` / `target-jax` (`0.10.2` -> `0.10`).

    A version mmalint does not know is an error, never quietly another one: predicting 0.12's
    behaviour for a user who asked for 0.9 or 1.0 would be a silent lie.
    """
    if not _VERSION.fullmatch(text):
        raise TargetError(f"expected a jax version like {catalog.versions[-1]}, got {text!r}")
    major, minor = (int(part) for part in text.split(".")[:2])
    for known in catalog.versions:
        if tuple(int(part) for part in known.split(".")) == (major, minor):
            return known
    raise TargetError(
        f"mmalint does not know jax {text}; it knows {_known(catalog)} "
        f"(a patch release such as {catalog.versions[0]}.2 counts as {catalog.versions[0]})"
    )


def infer(root: Path | None, catalog: Catalog, environ: Mapping[str, str], fallback: TargetJax) -> TargetJax:
    """The target for a project at `root` that sets none: its declared jax, else its
    environment's, else `fallback`."""
    if root is not None:
        for evidence in (declared_jax(root), environment_jax(root, environ)):
            if evidence is not None and (target := from_evidence(evidence, catalog)) is not None:
                return target
    return fallback


def fallback(catalog: Catalog, installed: str | None) -> TargetJax:
    """The jax installed next to mmalint (`installed`, from its metadata), else the newest known."""
    if installed is not None:
        target = from_evidence(
            Evidence("the jax installed next to mmalint", f"jax {installed}", pinned(installed)), catalog)
        if target is not None:
            return target
    return TargetJax(catalog.versions[-1], "the newest jax mmalint knows (nothing else says)")


def from_evidence(evidence: Evidence, catalog: Catalog) -> TargetJax | None:
    """The catalog version a requirement predicts for: the lowest known release it allows.

    A range predicts its lowest release mmalint knows, like ruff's lower bound of
    `requires-python`, and says so; a version newer than any mmalint knows predicts the newest,
    an older one the oldest, with a note. None when nothing satisfies the requirement.
    """
    allowed = sorted(v for v in _probes(evidence.specifier, catalog) if evidence.specifier.contains(v, prereleases=True))
    if not allowed:
        return None
    known = {_series(v): v for v in catalog.versions}
    series = sorted({_series(str(v)) for v in allowed})
    chosen = next((s for s in series if s in known), None)
    if chosen is not None:
        version = known[chosen]
        pin = len(series) == 1 and any(c.operator in ("==", "===") for c in evidence.specifier)
        if pin:
            return TargetJax(version, evidence.text)
        also = [known[s] for s in series if s in known and s != chosen]
        if series[0] < _series(catalog.versions[0]):
            also.insert(0, "older jax")
        note = f"a range: predicting its lowest release that mmalint knows, {version}"
        if also:
            note += f" (it also allows {', '.join(also)}: pin jax or set target-jax to predict another)"
        return TargetJax(version, evidence.text, note)
    newest, oldest = catalog.versions[-1], catalog.versions[0]
    if series[0] > _series(newest):
        return TargetJax(newest, evidence.text, (
            f"newer than any jax mmalint knows ({_known(catalog)}): predicting jax {newest}; "
            "a newer mmalint may know it"), warn=True)
    return TargetJax(oldest, evidence.text, (
        f"older than any jax mmalint knows ({_known(catalog)}): predicting jax {oldest}, "
        "whose checks may differ"), warn=True)


def _probes(specifier: SpecifierSet, catalog: Catalog) -> set[Version]:
    """Versions that tell which releases a specifier allows: each it names and its neighbours,
    and the first patch releases of every minor version the catalog knows."""
    probes: set[Version] = set()
    for clause in specifier:
        try:
            named = Version(clause.version.removesuffix(".*"))
        except InvalidVersion:
            continue  # `===` with a non-PEP 440 string
        major, minor, patch = (*named.release, 0, 0)[:3]
        probes |= {named, Version(f"{major}.{minor}"), Version(f"{major}.{minor}.{patch + 1}"),
                   Version(f"{major}.{minor + 1}"), Version(f"{major + 1}.0")}
    for known in catalog.versions:
        probes |= {Version(f"{known}.{patch}") for patch in range(_PATCH_PROBES)}
    newest_major, newest_minor = _series(catalog.versions[-1])
    probes |= {Version(f"{newest_major}.{newest_minor + 1}"), Version("0.0"), Version("999.0")}
    return probes


def _series(version: str) -> tuple[int, int]:
    major, minor = (*Version(version).release, 0)[:2]
    return major, minor


def _known(catalog: Catalog) -> str:
    return ", ".join(catalog.versions)
