"""The installed jax's version without importing `importlib.metadata`: the same answer as it
gives, on the layouts a site-packages directory has, and its own answer where unsure."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from mmalint import jaxversion


def _dist_info(site: Path, name: str, version: str | None) -> None:
    info = site / name
    info.mkdir(parents=True)
    headers = "Metadata-Version: 2.1\nName: jax\n" + (f"Version: {version}\n" if version else "")
    (info / "METADATA").write_text(headers + "\nVersion: 9.9 (in the description, not a header)\n")


def _egg_info_file(site: Path, name: str, version: str) -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / name).write_text(f"Metadata-Version: 1.0\nName: jax\nVersion: {version}\n")


def _egg_info_dir(site: Path, name: str, version: str) -> None:
    (site / name).mkdir(parents=True)
    (site / name / "PKG-INFO").write_text(f"Metadata-Version: 1.0\nName: jax\nVersion: {version}\n")


def _importlib_says() -> str | None:
    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


LAYOUTS = {
    "dist-info": (lambda t: _dist_info(t / "a", "jax-0.10.2.dist-info", "0.10.2"), ["a"], "0.10.2"),
    "upper case": (lambda t: _dist_info(t / "a", "JAX-0.11.2.dist-info", "0.11.2"), ["a"], "0.11.2"),
    "egg-info file": (lambda t: _egg_info_file(t / "a", "jax-0.4.30-py3.11.egg-info", "0.4.30"), ["a"], "0.4.30"),
    "egg-info dir": (lambda t: _egg_info_dir(t / "a", "jax.egg-info", "0.12.0"), ["a"], "0.12.0"),
    "a plugin is not jax": (lambda t: _dist_info(t / "a", "jax_cuda12_plugin-0.10.2.dist-info", "0.10.2"), ["a"], None),
    "the first directory wins": (
        lambda t: (_dist_info(t / "a", "jax-0.11.2.dist-info", "0.11.2"), _dist_info(t / "b", "jax-0.10.2.dist-info", "0.10.2")),
        ["missing", "a", "b"], "0.11.2",
    ),
    "none": (lambda t: (t / "a").mkdir(), ["a"], None),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_version_is_importlib_metadatas_without_importing_it(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, entries, expected = LAYOUTS[layout]
    make(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path / e) for e in entries])
    assert jaxversion._from_path() == expected  # decided here, not handed to importlib.metadata
    assert jaxversion.installed_jax_version() == expected == _importlib_says()


@pytest.mark.parametrize("layout", ["two candidates in one directory", "a zip on the path", "no Version header"])
def test_what_it_is_unsure_of_is_importlib_metadatas_to_answer(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "a"
    if layout == "two candidates in one directory":
        _dist_info(site, "jax-0.10.2.dist-info", "0.10.2")
        _dist_info(site, "jax-0.11.2.dist-info", "0.11.2")
        entries = [str(site)]
    elif layout == "a zip on the path":
        tmp_path.joinpath("b").mkdir()
        with zipfile.ZipFile(tmp_path / "b" / "deps.zip", "w") as z:
            z.writestr("jax-0.9.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: jax\nVersion: 0.9.0\n")
        _dist_info(site, "jax-0.10.2.dist-info", "0.10.2")
        entries = [str(tmp_path / "b" / "deps.zip"), str(site)]
    else:
        _dist_info(site, "jax-0.10.2.dist-info", None)
        entries = [str(site)]
    monkeypatch.setattr(sys, "path", entries)
    assert jaxversion._from_path() is jaxversion._UNSURE
    assert jaxversion.installed_jax_version() == _importlib_says()

