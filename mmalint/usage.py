"""Checking what the user asked for (rule selectors, a target jax), for the CLI and the server.

Both take the same options; a bad one is a `UsageError` whose message names the option, which
the CLI prints with exit code 2 and the server shows as a window message.
"""

from __future__ import annotations

import re

from mmalint.catalog import Catalog, CatalogError


class UsageError(Exception):
    """Bad command-line input: a clear message and exit code 2."""


def validate_selectors(selectors: tuple[str, ...], catalog: Catalog, option: str) -> None:
    for selector in selectors:
        if selector == "ALL":
            continue
        if not re.fullmatch(r"MMA\d{0,3}", selector) or not catalog.select((selector,)):
            raise UsageError(f"{option}: unknown rule selector {selector!r} (see `mmalint rules`)")


def resolve_target_jax(requested: str | None, catalog: Catalog) -> str:
    from mmalint.jaxversion import installed_jax_version
    from mmalint.target_jax import TargetError, parse_version

    if requested is not None:
        if not re.fullmatch(r"\d+\.\d+(\.\d+)*", requested):
            raise UsageError(f"--target-jax: expected a version like 0.11, got {requested!r}")
        try:
            return parse_version(requested, catalog)
        except TargetError as exc:
            raise UsageError(f"--target-jax: {exc}") from None
    installed = installed_jax_version()
    if installed is not None:
        try:
            return catalog.resolve_version(installed)
        except CatalogError:
            pass
    return catalog.versions[-1]
