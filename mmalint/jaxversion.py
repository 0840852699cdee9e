"""The installed jax's version, read from package metadata: mmalint never imports jax."""

from __future__ import annotations

from importlib import metadata


def installed_jax_version() -> str | None:
    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
