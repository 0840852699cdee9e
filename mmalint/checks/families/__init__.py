"""The instruction families, keyed by name: what each one's calls are made of (roles and
memory spaces, APIs, options) and how a recorded site becomes the normalized `MmaCall`.

One module per family, as jax has `mma.py`, `wgmma.py` and `tcgen05.py`; everything outside a
family's modules asks this registry instead of naming the family's API strings.
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite
from mmalint.catalog import Catalog
from mmalint.checks.call import MmaCall
from mmalint.checks.families import mma, tcgen05, wgmma
from mmalint.checks.families.family import Api, Family, Role

FAMILIES: dict[str, Family] = {f.name: f for f in (mma.FAMILY, wgmma.FAMILY, tcgen05.FAMILY)}


def family(name: str) -> Family:
    """The family named `name` (`mma`)."""
    return FAMILIES[name]


def family_of_api(api: str) -> Family | None:
    """The family whose API `api` is (canonical name), or None."""
    for f in FAMILIES.values():
        if f.has_api(api):
            return f
    return None


def normalize(
    site: MmaSite, catalog: Catalog, version: str, target_arch: tuple[int, int] | None = None
) -> MmaCall:
    """The site's facts for one jax version, as its family normalizes them."""
    return FAMILIES[site.family].normalize(site, catalog, version, target_arch)


__all__ = ["FAMILIES", "Api", "Family", "Role", "family", "family_of_api", "normalize"]
