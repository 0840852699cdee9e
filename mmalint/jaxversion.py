"""The installed jax's version, read from package metadata: mmalint never imports jax.

`importlib.metadata` answers, but importing it (email, zipfile, csv) costs 40-50 ms, a tenth of
a check served from the cache. The common layouts are read here the way it reads them: the
first directory of `sys.path` with a distribution named jax (`jax-0.10.2.dist-info`, an
`.egg-info` directory or file), its `Version` header. Whatever else it might see (a zip on the
path, a finder of its own on `sys.meta_path`, two candidates in one directory, whose order
would be the directory listing's) is left to it.
"""

from __future__ import annotations

import os
import re
import sys

_UNSURE = object()
_SUFFIXES = (".dist-info", ".egg-info")


def installed_jax_version() -> str | None:
    found = _from_path()
    if found is not _UNSURE:
        assert found is None or isinstance(found, str)
        return found
    from importlib import metadata

    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """PEP 503's normalized name, as `packaging.utils.canonicalize_name` (which, with
    `packaging.requirements`, costs 30 ms to import) and as importlib.metadata matches a
    distribution's (it joins with `_`: the same names compare equal)."""
    return _SEPARATORS.sub("-", name).lower()


def _from_path() -> object:
    """jax's version from the directories of `sys.path`, None when none has it, `_UNSURE` when
    `importlib.metadata` could see what this does not."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder for finder in sys.meta_path):
        return _UNSURE
    for entry in sys.path:
        directory = entry or os.curdir
        if not os.path.isdir(directory):
            if os.path.lexists(directory):
                return _UNSURE  # a zip on the path
            continue
        if directory.lower().endswith(".egg"):
            return _UNSURE
        try:
            names = os.listdir(directory)
        except OSError:
            return _UNSURE
        found = [
            name for name in names
            if name.lower().endswith(_SUFFIXES)
            and canonicalize_name(name.rpartition(".")[0].partition("-")[0]) == "jax"
        ]
        if not found:
            continue
        if len(found) > 1:
            return _UNSURE
        return _version(os.path.join(directory, found[0]))
    return None


def _version(info: str) -> object:
    if os.path.isdir(info):
        info = os.path.join(info, "METADATA" if info.lower().endswith(".dist-info") else "PKG-INFO")
    try:
        with open(info, encoding="utf-8") as handle:
            head = handle.read(64 * 1024)
    except (OSError, UnicodeDecodeError):
        return _UNSURE
    for line in head.splitlines():
        if not line.strip():
            break  # the end of the headers
        name, colon, value = line.partition(":")
        if colon and name.strip().lower() == "version" and not line[0].isspace():
            return value.strip() or _UNSURE
    return _UNSURE
